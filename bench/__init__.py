"""The scan benchmark: run it with ``python -m bench.run`` (see bench/run.py)."""
