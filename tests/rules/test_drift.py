"""DS-03 and DS-04 as one rule on one cluster, and the BIOS the collector reads.

The expectations follow docs/rules.md: the connected hosts of a GPU cluster fail DS-03
when they run more than one ESXi build, DS-04 when hosts of one server model run more
than one BIOS. GPU-08, which compares the vGPU managers, is in
tests/rules/test_vgpu_manager.py. The estates come from tests/support/builders.py.

Then DS-03's and DS-04's exact messages and boundaries (rules/drift.py), by hand:
healthy() gives three connected hosts h1..h3 in c1 on ESXi 8.0.3 build 24022510.
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


# --- exact messages and boundaries, by hand -----------------------------------------------


def test_ds03_messages() -> None:
    e = healthy()
    assert judge_cluster(drift.esxi_build, e.inv) == Outcome(
        True,
        "every connected host runs ESXi 8.0.3 build 24022510",
        {"builds": {"8.0.3 build 24022510": ["h1", "h2", "h3"]}},
    )
    hosts(e)[0].version, hosts(e)[0].build = "8.0.2", "22380479"
    hosts(e)[2].version, hosts(e)[2].build = "8.0.2", "22380479"
    outcome = judge_cluster(drift.esxi_build, e.inv)
    assert outcome is not None
    assert outcome.message == (
        "2 ESXi builds: 8.0.2 build 22380479 (h1, h3); 8.0.3 build 24022510 (h2)"
    )


def test_ds03_compares_two_hosts_with_a_known_build() -> None:
    e = healthy()
    hosts(e)[2].build = ""
    outcome = judge_cluster(drift.esxi_build, e.inv)
    assert outcome is not None and outcome.passed
    assert outcome.evidence == {"builds": {"8.0.3 build 24022510": ["h1", "h2"]}}


def test_ds04_messages() -> None:
    e = with_bios(healthy(), "2.1.5", "1.6.6", "2.1.5")
    outcome = judge_cluster(drift.bios_version, e.inv)
    assert outcome is not None
    assert outcome.message == (
        "Dell Inc. PowerEdge R760: 2 BIOS versions, 1.6.6 of 2024-05-15 (h2); "
        "2.1.5 of 2024-05-15 (h1, h3)"
    )
    e = with_bios(healthy(), "2.1.5", "2.1.5", "2.1.5")
    for host in hosts(e):
        host.bios_release_date = ""
    outcome = judge_cluster(drift.bios_version, e.inv)
    assert outcome == Outcome(
        True,
        "one BIOS per server model: Dell Inc. PowerEdge R760 on 2.1.5",
        {"bios_by_model": {"Dell Inc. PowerEdge R760": {"2.1.5": ["h1", "h2", "h3"]}}},
    )


def test_ds04_names_each_model_that_drifts_and_models_without_a_name() -> None:
    e = with_bios(healthy(), "A1", "A2", "B1")
    hosts(e)[2].vendor, hosts(e)[2].model = "", ""
    e.host("h4", "c1").bios_version = "B2"
    hosts(e)[3].vendor, hosts(e)[3].model = " ", ""
    outcome = judge_cluster(drift.bios_version, e.inv)
    assert outcome is not None and not outcome.passed
    assert outcome.message == (
        "Dell Inc. PowerEdge R760: 2 BIOS versions, A1 of 2024-05-15 (h1); A2 of 2024-05-15 (h2); "
        "unknown model: 2 BIOS versions, B1 of 2024-05-15 (h3); B2 (h4)"
    )


def test_ds04_two_hosts_of_a_model_are_enough_to_compare() -> None:
    e = with_bios(healthy(), "2.1.5", "2.1.5", "")
    outcome = judge_cluster(drift.bios_version, e.inv)
    assert outcome is not None and outcome.passed
    assert outcome.evidence["bios_by_model"] == {
        "Dell Inc. PowerEdge R760": {"2.1.5 of 2024-05-15": ["h1", "h2"]}
    }


def test_ds03_a_mixed_cluster_fails_with_its_whole_verdict() -> None:
    e = healthy()
    hosts(e)[1].version, hosts(e)[1].build = "7.0.3", "21930508"
    assert judge_cluster(drift.esxi_build, e.inv) == Outcome(
        False,
        "2 ESXi builds: 7.0.3 build 21930508 (h2); 8.0.3 build 24022510 (h1, h3)",
        {"builds": {"7.0.3 build 21930508": ["h2"], "8.0.3 build 24022510": ["h1", "h3"]}},
    )


def test_ds04_a_drifted_model_fails_with_its_whole_verdict() -> None:
    e = with_bios(healthy(), "2.1.5", "2.2.1", "2.1.5")
    assert judge_cluster(drift.bios_version, e.inv) == Outcome(
        False,
        "Dell Inc. PowerEdge R760: 2 BIOS versions, 2.1.5 of 2024-05-15 (h1, h3); "
        "2.2.1 of 2024-05-15 (h2)",
        {
            "bios_by_model": {
                "Dell Inc. PowerEdge R760": {
                    "2.1.5 of 2024-05-15": ["h1", "h3"],
                    "2.2.1 of 2024-05-15": ["h2"],
                }
            }
        },
    )


def test_ds04_passes_naming_the_bios_of_each_model() -> None:
    e = with_bios(healthy(), "2.1.5", "2.1.5", "U54")
    h3, h4 = hosts(e)[2], e.host("h4", "c1")
    for host in (h3, h4):
        host.vendor, host.model = "HPE", "ProLiant DL380 Gen11"
        host.bios_version, host.bios_release_date = "U54", ""
    assert judge_cluster(drift.bios_version, e.inv) == Outcome(
        True,
        "one BIOS per server model: Dell Inc. PowerEdge R760 on 2.1.5 of 2024-05-15, "
        "HPE ProLiant DL380 Gen11 on U54",
        {
            "bios_by_model": {
                "Dell Inc. PowerEdge R760": {"2.1.5 of 2024-05-15": ["h1", "h2"]},
                "HPE ProLiant DL380 Gen11": {"U54": ["h3", "h4"]},
            }
        },
    )
