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

from gpuaudit.check import run_checks
from gpuaudit.inventory import Inventory
from gpuaudit.plan.rolling import EXHAUSTIVE_HOSTS, rolling_all
from gpuaudit.report.json_report import from_json_data, render_json, report_schema
from tests.builders import Estate, context

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
