"""The rolling-upgrade plan on a hand-built cluster whose best order is not host-name order.

Three hosts, one L4 each in equal-size mode (sameSize), each offering grid_l4-8q and
grid_l4-12q. NVIDIA's vGPU user guide (A.1, "Virtual GPU Types for NVIDIA L4"): an L4
holds 3 L4-8Q or 2 L4-12Q, and a GPU in equal-size mode runs one profile at a time.
DRS is fully automated with VgpuMMAutomationTimeoutSecs=-1 (Broadcom KB 88271).

- a: one 12q VM (x)          -> its GPU takes only 12q, 1 more
- b: two 8q VMs (b1, b2)     -> its GPU takes only 8q, 1 more
- c: one 8q VM (c1)          -> its GPU takes only 8q, 2 more

Name order a, b, c: x finds no 12q room (b and c run 8q): it blocks (1). b1, b2 go to c
(2 free 8q slots; a runs 12q); c then runs c1, b1, b2 and empties onto b, now empty. 1.
Order b, a, c: b1, b2 go to c (a runs 12q); x goes to b, now empty; c's three 8q VMs go
to a, now empty. 0. Every order starting with a costs 1 (x has no room), so b, a, c is
the first order, by host names, with no downtime.
"""

from __future__ import annotations

import json

import pytest

from gpuaudit.inventory import GpuAttachment, Inventory, ProfileCapacity
from gpuaudit.plan.rolling import EXHAUSTIVE_HOSTS, _after, _moved, rolling_all
from gpuaudit.report.json_report import from_json_data, render_json, report_schema
from gpuaudit.results import RollingStep, VmFate
from gpuaudit.verdict.check import run_checks
from tests.support.builders import Estate, context

PROFILES = ("grid_l4-8q", "grid_l4-12q")


def estate() -> Inventory:
    e = Estate()
    c = e.cluster("roll")
    c.drs_enabled, c.drs_automation = True, "fullyAutomated"
    c.drs_options = {"VgpuMMAutomationTimeoutSecs": "-1"}
    hosts = {n: e.host(n, "roll", profiles=PROFILES) for n in ("a", "b", "c")}
    gpus = {n: e.gpu(h, vgpu_mode="sameSize") for n, h in hosts.items()}
    e.datastore("san", list(hosts.values()))
    for vm, host, profile in (
        ("x", "a", "grid_l4-12q"),
        ("b1", "b", "grid_l4-8q"),
        ("b2", "b", "grid_l4-8q"),
        ("c1", "c", "grid_l4-8q"),
    ):
        e.vm(vm, hosts[host], ["san"], vgpu=profile, gpu=gpus[host])
    return e.inv


def test_the_best_order_is_not_name_order_and_avoids_downtime() -> None:
    (plan,) = rolling_all(context(estate()))
    assert plan.exhaustive
    assert plan.order == ["b", "a", "c"]
    assert plan.downtime == 0
    moves = [sorted((v.vm, v.fate, v.to_host) for v in s.vms) for s in plan.steps]
    assert moves == [
        [("b1", "moved", "c"), ("b2", "moved", "c")],
        [("x", "moved", "b")],
        [("b1", "moved", "a"), ("b2", "moved", "a"), ("c1", "moved", "a")],
    ]
    assert plan.notes == []


def test_downtime_no_order_avoids_is_said() -> None:
    inv = estate()
    # vSphere's VM Operator marks x: DRS powers it off whenever a enters maintenance mode.
    next(v for v in inv.vms if v.name == "x").evacuation_poweroff = "TRUE"
    (plan,) = rolling_all(context(inv))
    assert plan.downtime == 1
    assert plan.notes == ["no order avoids GPU VM downtime: 1 powered off or blocking in all"]


def test_beyond_the_exhaustive_limit_the_order_is_greedy() -> None:
    e = Estate()
    c = e.cluster("big")
    c.drs_enabled, c.drs_automation = True, "fullyAutomated"
    c.drs_options = {"VgpuMMAutomationTimeoutSecs": "-1"}
    hosts = [e.host(f"h{i:02}", "big", profiles=PROFILES) for i in range(EXHAUSTIVE_HOSTS + 1)]
    for h in hosts:
        e.gpu(h, vgpu_mode="sameSize")
    e.datastore("san", hosts)
    e.vm("only", hosts[0], ["san"], vgpu="grid_l4-8q")
    (plan,) = rolling_all(context(e.inv))
    assert not plan.exhaustive
    assert plan.downtime == 0
    assert "a better order may exist" in plan.notes[0]


def test_the_json_report_carries_it_and_reads_it_back() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    inv = estate()
    result = run_checks(inv)
    result.rolling = rolling_all(context(inv))
    doc = render_json(result)
    jsonschema.validate(doc, report_schema())
    (r,) = doc["rolling"]
    assert (r["cluster"], r["order"], r["downtime"], r["exhaustive"]) == (
        "roll",
        ["b", "a", "c"],
        0,
        True,
    )
    assert from_json_data(json.loads(json.dumps(doc))).rolling == result.rolling


def test_a_cluster_of_exactly_the_limit_is_tried_exhaustively(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("gpuaudit.plan.rolling.EXHAUSTIVE_HOSTS", 3)
    (plan,) = rolling_all(context(estate()))
    assert (plan.exhaustive, plan.order, plan.notes) == (True, ["b", "a", "c"], [])


def test_the_greedy_order_follows_the_earlier_moves(monkeypatch: pytest.MonkeyPatch) -> None:
    # Greedy on a, b, c: first b (0; a would block x), b1 and b2 going to c. Then a costs
    # 0 (x goes to b, now empty) and c costs 0 (c1, b1, b2 go to b): a by name. Then c,
    # its three 8q VMs going to a, now empty. Judged without the earlier moves, the second
    # step would be c (a still blocking x).
    monkeypatch.setattr("gpuaudit.plan.rolling.EXHAUSTIVE_HOSTS", 2)
    (plan,) = rolling_all(context(estate()))
    assert (plan.exhaustive, plan.order, plan.downtime) == (False, ["b", "a", "c"], 0)
    assert plan.notes == [
        "3 hosts, more than 2: each step takes the host with the least downtime then; "
        "a better order may exist"
    ]


def test_greedy_downtime_is_said_of_this_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("gpuaudit.plan.rolling.EXHAUSTIVE_HOSTS", 2)
    inv = estate()
    next(v for v in inv.vms if v.name == "x").evacuation_poweroff = "TRUE"
    (plan,) = rolling_all(context(inv))
    assert plan.notes[1] == (
        "this order does not avoid GPU VM downtime: 1 powered off or blocking in all"
    )


def step_of(*fates: VmFate) -> RollingStep:
    return RollingStep("b", list(fates))


def test_after_keeps_where_each_moved_vm_went() -> None:
    step = step_of(
        VmFate("b1", "moved", "", "c", "0000:3b:00.0, 0000:5e:00.0"),
        VmFate("b2", "moved", "", "a", None),
        VmFate("b3", "blocking", "no host takes it: full"),
    )
    earlier = (("x", ("b", ("0000:3b:00.0",))),)
    assert _after(earlier, step) == (
        ("b1", ("c", ("0000:3b:00.0", "0000:5e:00.0"))),
        ("b2", ("a", ())),
        ("x", ("b", ("0000:3b:00.0",))),
    )


def capacity_estate() -> Inventory:
    """estate() with vCenter's remaining capacity (QueryCapacity) on every host: 8q
    1 left on b, 0 on c; 12q 1 left everywhere. Profile names in vCenter's case."""
    inv = estate()
    for h in inv.hosts:
        for p in h.vgpu_profiles:
            p.name = p.name.upper()
            left = {"b": 1, "c": 0}.get(h.name, 1) if p.name.endswith("8Q") else 1
            p.capacity = ProfileCapacity(3, 3 - left, left, 0)
    return inv


def remaining(inv: Inventory, host: str) -> dict[str, int]:
    h = next(h for h in inv.hosts if h.name == host)
    return {p.name: p.capacity.remaining for p in h.vgpu_profiles if p.capacity}


def gpu_vms(inv: Inventory, host: str) -> list[str]:
    return next(h for h in inv.hosts if h.name == host).gpus[0].vms


def test_moved_puts_a_vm_on_its_new_host_and_gpu_in_a_copy() -> None:
    inv = capacity_estate()
    b1 = next(v for v in inv.vms if v.name == "b1")
    b1.gpus.append(GpuAttachment("dynamic", profile="grid_l4-12q"))  # no vGPU: not counted
    out = _moved(inv, {"b1": ("c", ("0000:3b:00.0",))})
    assert (gpu_vms(out, "b"), gpu_vms(out, "c")) == (["b2"], ["c1", "b1"])
    assert next(v for v in out.vms if v.name == "b1").host == "c"
    # b gains back the 8q b1 held; c, with none left, stays at 0; 12q untouched.
    assert remaining(out, "b") == {"GRID_L4-8Q": 2, "GRID_L4-12Q": 1}
    assert remaining(out, "c") == {"GRID_L4-8Q": 0, "GRID_L4-12Q": 1}
    assert remaining(out, "a") == {"GRID_L4-8Q": 1, "GRID_L4-12Q": 1}
    # The inventory itself is as it was.
    assert (gpu_vms(inv, "b"), gpu_vms(inv, "c")) == (["b1", "b2"], ["c1"])
    assert remaining(inv, "b")["GRID_L4-8Q"] == 1


def test_moved_takes_one_from_the_new_hosts_remaining() -> None:
    inv = capacity_estate()
    b = next(h for h in inv.hosts if h.name == "b")
    next(p for p in b.vgpu_profiles if p.name == "GRID_L4-8Q").capacity.remaining = 2
    out = _moved(inv, {"c1": ("b", ("0000:3b:00.0",))})
    assert remaining(out, "b")["GRID_L4-8Q"] == 1
    assert remaining(out, "c")["GRID_L4-8Q"] == 1
    assert gpu_vms(out, "c") == []


def test_moved_places_a_vm_whose_host_was_unknown() -> None:
    inv = capacity_estate()
    next(v for v in inv.vms if v.name == "c1").host = None
    out = _moved(inv, {"c1": ("a", ("0000:3b:00.0",))})
    assert gpu_vms(out, "a") == ["x", "c1"]
    assert gpu_vms(out, "c") == ["c1"]  # no host was known to take it from
