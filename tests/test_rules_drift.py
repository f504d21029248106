"""DS-03 and DS-04 as one rule on one cluster, and the BIOS the collector reads.

The expectations follow docs/rules.md: the connected hosts of a GPU cluster fail DS-03
when they run more than one ESXi build, DS-04 when hosts of one server model run more
than one BIOS. GPU-08, which compares the vGPU managers, is in
tests/test_rules_vgpu_manager.py. The estates come from tests/support/builders.py.
"""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace

from gpuaudit.inventory import Cluster, Host, Inventory
from gpuaudit.rules import drift
from gpuaudit.rules.registry import Outcome
from gpuaudit.vsphere.collect.hosts import build_host
from tests.support.builders import Estate, context, healthy


def judge_cluster(check: object, inv: Inventory, name: str = "c1") -> Outcome | None:
    cluster: Cluster = next(c for c in inv.clusters if c.name == name)
    return check(context(inv), cluster)  # type: ignore[operator,no-any-return]


def hosts(e: Estate) -> list[Host]:
    return e.inv.hosts


def with_bios(e: Estate, *versions: str) -> Estate:
    for host, version in zip(hosts(e), versions, strict=True):
        host.vendor, host.model = "Dell Inc.", "PowerEdge R760"
        host.bios_version, host.bios_release_date = version, "2024-05-15"
    return e


# --- DS-03 ---------------------------------------------------------------------------


def test_ds03_passes_one_build() -> None:
    outcome = judge_cluster(drift.esxi_build, healthy().inv)
    assert outcome is not None and outcome.passed
    assert outcome.evidence["builds"] == {"8.0.3 build 24022510": ["h1", "h2", "h3"]}


def test_ds03_fails_two_builds_and_names_the_hosts_of_each() -> None:
    e = healthy()
    hosts(e)[2].version, hosts(e)[2].build = "8.0.2", "22380479"
    outcome = judge_cluster(drift.esxi_build, e.inv)
    assert outcome is not None and not outcome.passed
    assert outcome.evidence["builds"] == {
        "8.0.2 build 22380479": ["h3"],
        "8.0.3 build 24022510": ["h1", "h2"],
    }
    assert "2 ESXi builds" in outcome.message


def test_ds03_leaves_out_disconnected_hosts_and_unknown_builds() -> None:
    e = healthy()
    hosts(e)[1].build = "1"
    hosts(e)[1].connection_state = "notResponding"
    hosts(e)[2].build = ""
    assert judge_cluster(drift.esxi_build, e.inv) is None  # one build known: nothing to compare


# --- DS-04 ---------------------------------------------------------------------------


def test_ds04_passes_one_bios_per_model() -> None:
    e = with_bios(healthy(), "2.1.5", "2.1.5", "U54 v2.16")
    hosts(e)[2].vendor, hosts(e)[2].model = "HPE", "ProLiant DL380 Gen11"
    outcome = judge_cluster(drift.bios_version, e.inv)
    assert outcome is not None and outcome.passed
    # The HPE host has no sibling of its model: it is not compared.
    assert list(outcome.evidence["bios_by_model"]) == ["Dell Inc. PowerEdge R760"]


def test_ds04_fails_two_bios_versions_of_one_model() -> None:
    e = with_bios(healthy(), "2.1.5", "1.6.6", "2.1.5")
    outcome = judge_cluster(drift.bios_version, e.inv)
    assert outcome is not None and not outcome.passed
    assert outcome.evidence["bios_by_model"]["Dell Inc. PowerEdge R760"] == {
        "1.6.6 of 2024-05-15": ["h2"],
        "2.1.5 of 2024-05-15": ["h1", "h3"],
    }


def test_ds04_does_not_compare_different_models() -> None:
    e = with_bios(healthy(), "2.1.5", "1.6.6", "3.0.0")
    for host, model in zip(hosts(e), ("R760", "R750", "R660"), strict=True):
        host.model = model
    assert judge_cluster(drift.bios_version, e.inv) is None


def test_ds04_is_not_examined_without_a_bios() -> None:
    assert judge_cluster(drift.bios_version, healthy().inv) is None


# --- the collector -------------------------------------------------------------------


def props(values: dict[str, object]) -> SimpleNamespace:
    return SimpleNamespace(
        name="h1", moref="host-1", get=lambda key, default=None: values.get(key, default)
    )


def test_collector_reads_the_bios_version_and_date() -> None:
    bios = SimpleNamespace(biosVersion="2.1.5", releaseDate=datetime(2024, 5, 15, tzinfo=UTC))
    host = build_host(props({"hardware.biosInfo": bios}), {})  # type: ignore[arg-type]
    assert (host.bios_version, host.bios_release_date) == ("2.1.5", "2024-05-15")


def test_collector_leaves_the_bios_unset_when_not_reported() -> None:
    host = build_host(props({}), {})  # type: ignore[arg-type]
    assert (host.bios_version, host.bios_release_date) == (None, None)
