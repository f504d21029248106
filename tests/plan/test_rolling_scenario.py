"""The rolling-upgrade plan on tests/scenarios/rolling.yaml, recorded from the lab
(cassettes/rolling.yaml): a cluster whose best order is not host-name order. Every
expectation is worked out by hand in the scenario's header: NVIDIA's L4 holds 3 L4-8Q or
2 L4-12Q, one frame-buffer size per GPU in equal-size mode; DRS evacuates vGPU VMs with
VgpuMMAutomationTimeoutSecs=-1 (Broadcom KB 88271).
"""

from __future__ import annotations

import pytest

from gpuaudit.inventory import Inventory
from gpuaudit.plan.rolling import rolling_all
from gpuaudit.verdict.check import run_checks
from gpuaudit.vsphere import obtain
from tests.conftest import CASSETTES
from tests.support.builders import context

CASSETTE = CASSETTES / "rolling.yaml"


@pytest.fixture(scope="module")
def recorded() -> Inventory:
    return obtain.obtain_inventory(obtain.Replay(CASSETTE))


def test_the_best_order_is_not_name_order_and_moves_every_vm(recorded: Inventory) -> None:
    (plan,) = rolling_all(context(recorded))
    assert (plan.cluster, plan.order, plan.downtime) == ("roll", ["roll-b", "roll-a", "roll-c"], 0)
    assert plan.exhaustive and plan.notes == []
    moves = [sorted((v.vm, v.fate, v.to_host) for v in s.vms) for s in plan.steps]
    assert moves == [
        [("b1", "moved", "roll-c"), ("b2", "moved", "roll-c")],
        [("x", "moved", "roll-b")],
        [("b1", "moved", "roll-a"), ("b2", "moved", "roll-a"), ("c1", "moved", "roll-a")],
    ]


def test_name_order_would_block_the_12q_vm(recorded: Inventory) -> None:
    # Each host on its own, as the cluster is now: roll-a first leaves x nowhere to go
    # (roll-b and roll-c run 8q), which is what taking the hosts by name would do.
    result = run_checks(recorded)
    fates = {
        v.vm: (h.host, v.fate, v.to_host)
        for c in result.maintenance
        for h in c.hosts
        for v in h.vms
    }
    assert fates == {
        "x": ("roll-a", "blocking", None),
        "b1": ("roll-b", "moved", "roll-c"),
        "b2": ("roll-b", "moved", "roll-c"),
        "c1": ("roll-c", "moved", "roll-b"),
    }
    vm13 = next(f for f in result.findings if f.rule == "VM-13")
    assert (vm13.object, vm13.status) == ("roll", "pass")
