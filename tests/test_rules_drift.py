"""DS-03, DS-04 and GPU-08 as one rule on one cluster, and the BIOS the collector reads.

The expectations follow docs/rules.md: the connected hosts of a GPU cluster fail DS-03
when they run more than one ESXi build, DS-04 when hosts of one server model run more
than one BIOS, and GPU-08 when its vGPU hosts run more than one vGPU manager version;
GPU-08 gives no verdict (no finding, never a pass) when the versions were not read.
The estates come from tests/builders.py.
"""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace

from gpuaudit.collect.hosts import build_host
from gpuaudit.inventory import Cluster, Host, Inventory
from gpuaudit.rules import catalogue, drift
from gpuaudit.rules.registry import Outcome
from tests.builders import Estate, context, healthy


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


# --- GPU-08 --------------------------------------------------------------------------


def test_gpu08_gives_no_verdict_without_the_versions() -> None:
    assert judge_cluster(drift.vgpu_manager, healthy().inv) is None


def test_gpu08_passes_one_version() -> None:
    e = healthy()
    for host in hosts(e):
        host.vgpu_manager_version = "550.144.02"
    outcome = judge_cluster(drift.vgpu_manager, e.inv)
    assert outcome is not None and outcome.passed
    assert outcome.severity is None  # the rule's own (high)
    assert outcome.evidence["versions"] == {"550.144.02": ["h1", "h2", "h3"]}


def test_gpu08_fails_two_versions_even_when_one_host_is_unknown() -> None:
    e = healthy()
    hosts(e)[0].vgpu_manager_version = "550.144.02"
    hosts(e)[1].vgpu_manager_version = "535.230.02"
    outcome = judge_cluster(drift.vgpu_manager, e.inv)
    assert outcome is not None and not outcome.passed
    assert outcome.evidence["versions"] == {"535.230.02": ["h2"], "550.144.02": ["h1"]}
    assert outcome.evidence["unknown"] == ["h3"]


def test_gpu08_compares_only_vgpu_hosts() -> None:
    e = Estate()
    e.cluster("c1")
    vgpu = e.host("h1", "c1")
    e.gpu(vgpu)
    passthrough = e.host("h2", "c1", profiles=())
    e.gpu(passthrough, mode="passthrough")
    vgpu.vgpu_manager_version = "550.144.02"
    assert judge_cluster(drift.vgpu_manager, e.inv) is None  # one vGPU host: nothing to compare


def test_gpu08_cites_the_privilege_page() -> None:
    rule = next(r for r in catalogue() if r.id == "GPU-08")
    assert any("ImageConfigManager" in ref.url for ref in rule.references)


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
