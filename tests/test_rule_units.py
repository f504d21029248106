"""One rule on one object: each per-object rule passes a sound object and fails a broken one.

The expectations follow the rules' meaning in docs/rules.md; the objects come from
tests/builders.py.
"""

from __future__ import annotations

from tests.builders import healthy


def test_healthy_estate_is_consistent() -> None:
    inv = healthy().inv
    assert [h.name for h in inv.hosts_in("c1")] == ["h1", "h2", "h3"]
    assert all(h.gpus[0].vms == [f"v{i}"] for i, h in enumerate(inv.hosts, 1))
