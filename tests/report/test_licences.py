"""The licence summary of a small estate, whole, written out by hand.

Cluster gpu-a (host a1, an L4 in vGPU mode): q1 (8Q, on), c1 (8C, on), q2 (4Q, off),
q3 (12Q, on) and web, a VM with no GPU. Cluster pt (host p1, an L4 passed through):
pv1 (on) and pv5 (off), whose guests LIC-01 found declared NVIDIA AI Enterprise;
pv3 (on), declared to need no licence; pv2 (on) and pv4 (off), declared nowhere.
Standalone host s1: b1 (2B, on). The VMs are listed in that order: web, pv3 first.

Editions by profile series, after NVIDIA's licensing guide: Q is RTX Virtual
Workstation, C AI Enterprise, B Virtual PC.
"""

from __future__ import annotations

from typing import Any

from gpuaudit.inventory import Inventory
from gpuaudit.report.licences import (
    PASSTHROUGH_NOTE,
    EditionCount,
    licence_summary,
    passthrough_editions,
)
from gpuaudit.results import Finding
from tests.support.builders import Estate

AIE, RTX, VPC = "NVIDIA AI Enterprise", "NVIDIA RTX Virtual Workstation", "NVIDIA Virtual PC"


def _estate() -> Inventory:
    e = Estate()
    e.cluster("gpu-a")
    e.cluster("pt", ha=False, admission=False)
    a1 = e.host("a1", "gpu-a")
    e.gpu(a1)
    p1 = e.host("p1", "pt", profiles=(), fc=0)
    pt = e.gpu(p1, mode="passthrough")
    s1 = e.host("s1", None)
    e.gpu(s1)
    e.vm("web", a1, [])
    e.vm("pv3", p1, [], passthrough=pt)
    e.vm("q1", a1, [], vgpu="grid_l4-8q")
    e.vm("c1", a1, [], vgpu="grid_l4-8c")
    e.vm("q2", a1, [], vgpu="grid_l4-4q", power="poweredOff")
    e.vm("q3", a1, [], vgpu="grid_l4-12q")
    e.vm("pv1", p1, [], passthrough=pt)
    e.vm("pv2", p1, [], passthrough=pt)
    e.vm("pv4", p1, [], passthrough=pt, power="poweredOff")
    e.vm("pv5", p1, [], passthrough=pt, power="poweredOff")
    e.vm("b1", s1, [], vgpu="grid_l4-2b")
    return e.inv


def _lic01(vm: str, **evidence: Any) -> Finding:
    return Finding("LIC-01", vm, "vm", "pass", "info", "declared", "pt", evidence=evidence)


FINDINGS = [
    _lic01("pv1", passthrough=True, declared_by="policy", edition=AIE),
    _lic01("pv5", passthrough=True, declared_by="policy", edition=AIE),
    _lic01("pv3", passthrough=True, declared_by="policy", edition=None),
    # Not declarations: no policy entry, no passthrough guest, another rule.
    _lic01("pv2", passthrough=True, edition=VPC),
    _lic01("pv4", declared_by="policy", edition=VPC),
    Finding(
        "LIC-02",
        "pv4",
        "vm",
        "fail",
        "low",
        "x",
        "pt",
        {"passthrough": True, "declared_by": "policy", "edition": VPC},
    ),
]


def test_passthrough_editions_are_those_lic01_found_declared() -> None:
    assert passthrough_editions(FINDINGS) == {"pv1": AIE, "pv5": AIE, "pv3": None}


def test_the_whole_summary() -> None:
    summary = licence_summary(_estate(), FINDINGS)
    assert summary.rows == [
        EditionCount(VPC, "(standalone hosts)", powered_on=1, registered=1, passthrough=0),
        EditionCount(AIE, "gpu-a", powered_on=1, registered=1, passthrough=0),
        EditionCount(RTX, "gpu-a", powered_on=2, registered=3, passthrough=0),
        EditionCount(AIE, "pt", powered_on=1, registered=2, passthrough=2),
    ]
    assert list(summary.totals.items()) == [(AIE, 2), (RTX, 2), (VPC, 1)]
    assert summary.total == 5
    assert (summary.passthrough_vms, summary.passthrough_assumed) == (5, 2)
    assert summary.note == (
        PASSTHROUGH_NOTE + " 2 passthrough GPU VMs with no edition declared are assumed to "
        "need no NVIDIA licence."
    )


def test_one_passthrough_vm_declared_nowhere() -> None:
    e = Estate()
    e.cluster("pt", ha=False, admission=False)
    p1 = e.host("p1", "pt", profiles=(), fc=0)
    e.vm("pv1", p1, [], passthrough=e.gpu(p1, mode="passthrough"))
    assert licence_summary(e.inv).to_dict() == {
        "rows": [],
        "totals": {},
        "total": 0,
        "passthrough_vms": 1,
        "note": "Passthrough GPU VMs count under the edition the policy declares for their "
        "guests' NVIDIA driver (licensing.passthrough). 1 passthrough GPU VM with no edition "
        "declared is assumed to need no NVIDIA licence.",
        "passthrough_assumed": 1,
    }


def test_without_passthrough_vms_the_note_is_the_plain_one() -> None:
    e = Estate()
    e.cluster("gpu-a")
    a1 = e.host("a1", "gpu-a")
    e.gpu(a1)
    e.vm("q1", a1, [], vgpu="grid_l4-8q")
    summary = licence_summary(e.inv)
    assert summary.note == PASSTHROUGH_NOTE
    assert summary.rows == [EditionCount(RTX, "gpu-a", 1, 1, 0)]
