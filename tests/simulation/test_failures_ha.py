"""What vSphere HA restarts and where host memory lets it: priorities, HA off, memory.

The scenario tests read tests/scenarios/hamemory.yaml and work out the memory fit by
hand, with the estimate that docs/rules.md documents: a host has its memory less
2048 MB and 1% of it for VMs; a powered-on VM takes its reservation (all its memory
for a GPU VM) plus 256 MB and 1% of its memory.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import yaml

from gpuaudit.inventory import Inventory, Vm
from gpuaudit.model.policy import Intent, Policy
from gpuaudit.report import render_html
from gpuaudit.report.capacity import build_chart
from gpuaudit.results import AuditResult
from gpuaudit.simulation.failures import simulate_cluster, simulate_cluster_notes
from gpuaudit.verdict.check import run_checks
from gpuaudit.vsphere import obtain
from tests.conftest import CASSETTES
from tests.support.builders import Estate

SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "hamemory.yaml"


# --- the scenario, by hand ---------------------------------------------------------------


def scenario() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(SCENARIO.read_text())
    return data


def host_room_mb(memory_gb: int) -> int:
    mb = memory_gb * 1024
    return mb - 2048 - math.ceil(mb / 100)


def vm_takes_mb(vm: dict[str, Any]) -> int:
    memory = vm["memory_mb"]
    if vm.get("gpus") or vm.get("memory_locked_to_max"):
        reserved = memory
    else:
        reserved = vm.get("memory_reservation_mb", 0)
    return reserved + 256 + math.ceil(memory / 100)


def replayed() -> Inventory:
    return obtain.obtain_inventory(obtain.Replay(CASSETTES / "hamemory.yaml"))


def checked(policy: Policy | None = None) -> AuditResult:
    return run_checks(replayed(), policy)


def test_scenario_memory_fit_worked_out_by_hand() -> None:
    """Each failed host's 60 GB VM fits on another host only if its free memory takes it."""
    data = scenario()
    dc = data["datacenters"][0]
    vms = dc["vms"]
    inv = replayed()
    for name in ("mem-full", "mem-spare"):
        cluster = next(c for c in dc["clusters"] if c["name"] == name)
        hosts = [h["name"] for h in cluster["hosts"]]
        free = {
            h["name"]: host_room_mb(h["memory_gb"])
            - sum(vm_takes_mb(v) for v in vms if v["host"] == h["name"])
            for h in cluster["hosts"]
        }
        sim = simulate_cluster(inv, name)
        for failure in sim.failures:
            moving = [v for v in vms if v["host"] == failure.host and v.get("gpus")]
            for vm in moving:
                fits = [h for h in hosts if h != failure.host and free[h] >= vm_takes_mb(vm)]
                placed = {p.vm: p.to_host for p in failure.placed}
                if fits:
                    assert placed.get(vm["name"]) in fits
                else:
                    assert vm["name"] not in placed
                    (p,) = [p for p in failure.unplaced if p.vm == vm["name"]]
                    assert "not enough memory" in (p.reason or "")
                    assert f"{vm_takes_mb(vm)} MB" in (p.reason or "")
    # By hand: 65536 - 2048 - 656 = 62832 MB per host; a 60 GB VM takes
    # 61440 + 256 + 615 = 62311 MB. The spare host (a 4096 MB VM without reservation,
    # 256 + 41 = 297 MB) keeps 62535 MB: room for one such VM, not two.
    assert host_room_mb(64) == 62832
    assert vm_takes_mb({"memory_mb": 61440, "gpus": [1]}) == 62311
    assert simulate_cluster(inv, "mem-full").tolerates == 0
    assert simulate_cluster(inv, "mem-spare").tolerates == 1  # GPUs alone would give 3


def test_scenario_verdicts_follow_its_expectations() -> None:
    result = checked()
    for entry in scenario()["expect"]:
        found = {f.object: f.status for f in result.findings if f.rule == entry["rule"]}
        failed = {name for name, status in found.items() if status == "fail"}
        assert failed == set(entry["fail"]), entry["rule"]
        assert all(found[name] == "pass" for name in entry["pass"]), entry["rule"]


# A policy that declares VMware HA not mandated: not-restarted VMs are information.
NOT_MANDATED = Policy(
    intent=Intent(vm_ha_mandated=False), intent_declared=frozenset({"vm_ha_mandated"})
)


def test_disabled_priority_is_reported_apart_not_placed() -> None:
    result = checked(NOT_MANDATED)
    (off,) = [f for f in result.findings if f.rule == "HA-05" and f.object == "prio-off"]
    assert off.status == "fail" and off.severity == "info"
    assert "HA restart disabled" in off.message
    assert "can restart" not in off.message
    sim = next(s for s in result.simulations if s.cluster == "prio")
    assert sim.restart_disabled == ["prio-off"]
    failure = next(f for f in sim.failures if f.host == "prio-esx01")
    assert failure.placed == [] and failure.unplaced == []
    assert [(p.vm, p.reason) for p in failure.not_restarted] == [
        ("prio-off", "HA restart disabled")
    ]
    (ha08,) = [f for f in result.findings if f.rule == "HA-08" and f.object == "prio"]
    assert ha08.status == "pass" and "1 GPU VM(s) with HA restart disabled" in ha08.message


def test_ha_off_restarts_nothing_and_labels_manual_restart() -> None:
    result = checked(NOT_MANDATED)
    off = [f for f in result.findings if f.rule == "HA-05" and f.cluster == "ha-off"]
    assert {f.object for f in off} == {"off-vm-01", "off-vm-02"}
    for f in off:
        assert f.status == "fail" and f.severity == "info"
        assert "not restarted" in f.message and "manual restart" in f.message
        assert "can restart" not in f.message
    (ha08,) = [f for f in result.findings if f.rule == "HA-08" and f.object == "ha-off"]
    assert ha08.status == "fail" and "N+0" in ha08.message
    assert ha08.evidence["tolerates"] == 0 and ha08.evidence["manual_tolerates"] == 1
    sim = next(s for s in result.simulations if s.cluster == "ha-off")
    chart = build_chart(sim, result.inventory)
    assert chart.manual
    assert "manual restart" in chart.after_title and "manual restart" in chart.moved_label


def test_mandated_ha_makes_not_restarted_vms_a_failure_of_intent() -> None:
    policy = Policy(intent=Intent(vm_ha_mandated=True))
    result = checked(policy)
    severities = {
        f.object: f.severity
        for f in result.findings
        if f.rule == "HA-05" and f.object in ("prio-off", "off-vm-01")
    }
    assert severities == {"prio-off": "high", "off-vm-01": "high"}
    (ha08,) = [f for f in result.findings if f.rule == "HA-08" and f.object == "ha-off"]
    assert ha08.severity == "high"


# --- plain data ----------------------------------------------------------------------------


def big_vms(host_gb: int, spare: bool = False) -> Estate:
    """Three hosts with an L4 each and one 60 GB vGPU VM each; optionally a spare host."""
    e = Estate()
    e.cluster("c")
    hosts = [e.host(f"h{i}", "c") for i in (1, 2, 3, 4)[: 4 if spare else 3]]
    for h in hosts:
        h.memory_mb = host_gb * 1024
        e.gpu(h)
    e.datastore("san", hosts)
    for i, h in enumerate(hosts[:3], 1):
        vm = e.vm(f"v{i}", h, ["san"], vgpu="grid_l4-8q")
        vm.memory_mb = vm.memory_reservation_mb = 61440
    return e


def test_three_60gb_vms_never_share_a_64gb_host() -> None:
    sim = simulate_cluster(big_vms(64, spare=True).inv, "c")
    for failure in sim.failures[:3]:
        assert [p.to_host for p in failure.placed] == ["h4"]
    assert sim.tolerates == 1  # the L4 of h4 holds three 8q, its memory one 60 GB VM


def test_a_host_with_room_takes_the_vm() -> None:
    sim = simulate_cluster(big_vms(192).inv, "c")
    assert all(len(f.placed) == 1 for f in sim.failures)
    assert sim.tolerates == 2  # 192 GB hosts: room for two more 60 GB VMs each


def test_unplaced_for_memory_says_so() -> None:
    sim = simulate_cluster(big_vms(64).inv, "c")
    assert sim.tolerates == 0
    (p,) = sim.failures[0].unplaced
    assert "not enough memory for its 62311 MB" in (p.reason or "")
    assert "free h2: 521 MB" in (p.reason or "")


def test_reservations_of_vms_without_gpu_count() -> None:
    e = big_vms(128, spare=False)
    h2 = e.inv.host("h2")
    h3 = e.inv.host("h3")
    assert h2 is not None and h3 is not None
    for host in (h2, h3):  # 128 GB: 131072 - 2048 - 1311 - 62311 = 65402 MB left before it
        e.inv.vms.append(
            Vm(
                name=f"db-{host.name}",
                moref=f"vm-db-{host.name}",
                host=host.name,
                cluster="c",
                power_state="poweredOn",
                memory_mb=8192,
                memory_reservation_mb=4096,  # takes 4096 + 256 + 82 = 4434 MB: 60968 left
            )
        )
    failure = simulate_cluster(e.inv, "c").failures[0]
    assert failure.placed == [] and len(failure.unplaced) == 1


def test_host_too_small_for_the_vm_is_never_eligible() -> None:
    e = big_vms(64)
    e.inv.hosts[1].memory_mb = e.inv.hosts[2].memory_mb = 32768
    sim = simulate_cluster(e.inv, "c")
    reason = sim.failures[0].unplaced[0].reason or ""
    # 32768 - 2048 - 328 = 30392 MB for VMs, whatever runs there
    assert "no surviving host can take it (h2, h3: too little memory" in reason
    assert "the host has 30392 MB for VMs" in reason


def test_unknown_host_memory_is_not_checked_and_noted() -> None:
    e = big_vms(64)
    e.inv.hosts[1].memory_mb = 0
    out = simulate_cluster_notes(e.inv, "c")
    assert [p.to_host for p in out.simulation.failures[0].placed] == ["h2"]
    assert any("memory not checked on h2" in note for note in out.notes)


def test_disabled_vm_keeps_its_gpu_and_is_not_counted_in_n_plus_k() -> None:
    e = Estate()
    e.cluster("c")
    hosts = [e.host(f"h{i}", "c") for i in (1, 2)]
    for h in hosts:
        e.gpu(h)
    e.datastore("san", hosts)
    e.vm("keep", hosts[0], ["san"], vgpu="grid_l4-24q", priority="disabled")
    e.vm("move", hosts[1], ["san"], vgpu="grid_l4-24q")
    sim = simulate_cluster(e.inv, "c")
    assert sim.gpu_vms == 2 and sim.restart_disabled == ["keep"]
    by_host = {f.host: f for f in sim.failures}
    assert [p.vm for p in by_host["h1"].not_restarted] == ["keep"]
    assert by_host["h1"].placed == [] and by_host["h1"].unplaced == []
    (p,) = by_host["h2"].unplaced  # h1's only L4 still runs "keep"
    assert p.vm == "move" and "no GPU capacity" in (p.reason or "")
    assert sim.tolerates == 0


def test_host_monitoring_off_counts_as_ha_off() -> None:
    e = big_vms(192)
    e.inv.clusters[0].ha_host_monitoring = False
    sim = simulate_cluster(e.inv, "c")
    assert not sim.ha_restarts and sim.tolerates == 0 and sim.manual_tolerates == 2


def test_ha_off_verdicts_on_plain_data() -> None:
    e = big_vms(192)
    e.inv.clusters[0].ha_enabled = False
    result = run_checks(e.inv, NOT_MANDATED)
    ha05 = [f for f in result.findings if f.rule == "HA-05"]
    assert ha05 and all(f.status == "fail" and f.severity == "info" for f in ha05)
    assert all("manual restart would fit on" in f.message for f in ha05)


def test_only_disabled_vms_fail_ha08() -> None:
    e = big_vms(192)
    for vm in e.inv.vms:
        vm.restart_priority = "disabled"
    result = run_checks(e.inv, NOT_MANDATED)
    (ha08,) = [f for f in result.findings if f.rule == "HA-08"]
    assert ha08.status == "fail" and "restart priority disabled on all" in ha08.message
    assert ha08.severity == "info"


def test_html_report_says_manual_restart_and_restart_disabled() -> None:
    html = render_html(checked())
    off = html[html.index('aria-label="Cluster ha-off"') :]
    off = off[: off.index("</article>")]
    assert "vSphere HA does not restart VMs here" in off
    assert "(manual restart)" in off and "taken by a manual restart" in off
    assert "every displaced GPU VM restarts elsewhere" not in off
    prio = html[html.index('aria-label="Cluster prio"') :]
    prio = prio[: prio.index("</article>")]
    assert "Not restarted (HA restart disabled)" in prio and "prio-off" in prio
    assert "(HA restart)" in prio
