"""What the tests share: estate builders, the fault proxy, PostgreSQL, report and history tools.

Nothing here is a test; every tier may import it. The lab (tests/lab/) stays apart:
it is also a program of its own, run by the benchmarks.
"""
