"""A small audit result written out by hand, for tests that pin a whole report.

vCenter vc01.corp.example: cluster gpu-a in datacenter DC-East with host
esx-01.corp, and standalone host esx-09.corp in DC-West. Two rules: HA-01
(critical, two references) and GPU-02 (medium, no references, no rationale or
remediation). Findings, in order:

- HA-01 fails on cluster gpu-a, first seen 30 days before the scan;
- GPU-02 waived on VM "vdi 1/a%" (a name that needs percent-encoding);
- HA-01 passes on cluster gpu-b;
- X-99 (a rule not in the catalogue) fails, low, on standalone host esx-09.corp;
- GPU-02 waived, high, with no waiver, on a VM named "..", no cluster or host.

DS-01 raised. The scan ran at 11:30 at UTC+1, 10:30 UTC.
"""

from __future__ import annotations

import dataclasses

from gpuaudit.inventory import Cluster, Host, Inventory, VCenter
from gpuaudit.results import AuditResult, Finding, Reference, Rule, RuleError, Waiver
from tests.support.builders import passthrough_estate

CHECKED_AT = "2026-12-01T11:30:00+01:00"
FIRST_SEEN = "2026-11-01T00:00:00+00:00"

# sha256 of "rule\0kind\0object", the documented finding id, worked out once by hand.
ID_HA_GPU_A = "b202736757f3b89dc7d8e6ff8ceb630e8d40ee2935630456144cdbe6fb77975a"
ID_VDI = "bed4dace4c721be26b632546f02e3d672faa87fca9cee5dd280382f52b96d18b"
ID_X99 = "112a80db47eb62229ac4859e82c01bbc9a078e8384a1c616603c79b2695f333d"
ID_DOTDOT = "701551ceabde2bec45face14c8e87583ad4d4a09a2cef4676f684309ba4c5514"

HA_01 = Rule(
    id="HA-01",
    title="HA is on",
    category="ha",
    severity="critical",
    rationale="HA restarts GPU VMs.",
    remediation="Turn HA on.",
    object_kind="cluster",
    references=(
        Reference("vSphere HA", "https://docs.example/ha"),
        Reference("KB 2", "https://kb.example/2"),
    ),
)
GPU_02 = Rule(
    id="GPU-02",
    title="Profiles fit",
    category="gpu",
    severity="medium",
    rationale="",
    remediation="",
    object_kind="vm",
)

WAIVER = Waiver(rule="GPU-02", object="vdi*", reason="CAB-7", owner="ops", expires="2027-01-31")


def small_inventory() -> Inventory:
    return Inventory(
        source="vc01.corp.example",
        collected_at="2026-12-01T10:00:00Z",
        vcenter=VCenter(name="vc01"),
        datacenters=["DC-East", "DC-West"],
        clusters=[Cluster(name="gpu-a", moref="domain-c1", datacenter="DC-East")],
        hosts=[
            Host(name="esx-01.corp", moref="host-1", datacenter="DC-East", cluster="gpu-a"),
            Host(name="esx-09.corp", moref="host-9", datacenter="DC-West"),
        ],
    )


def small_findings() -> list[Finding]:
    return [
        Finding(
            rule="HA-01",
            object="gpu-a",
            object_kind="cluster",
            status="fail",
            severity="critical",
            message="HA is off",
            cluster="gpu-a",
            evidence={"ha_enabled": False},
        ),
        Finding(
            rule="GPU-02",
            object="vdi 1/a%",
            object_kind="vm",
            status="waived",
            severity="medium",
            message="",
            cluster="gpu-a",
            host="esx-01.corp",
            waiver=WAIVER,
        ),
        Finding(
            rule="HA-01",
            object="gpu-b",
            object_kind="cluster",
            status="pass",
            severity="critical",
            message="HA is on",
            cluster="gpu-b",
        ),
        Finding(
            rule="X-99",
            object="esx-09.corp",
            object_kind="host",
            status="fail",
            severity="low",
            message="odd",
            host="esx-09.corp",
        ),
        Finding(
            rule="GPU-02",
            object="..",
            object_kind="vm",
            status="waived",
            severity="high",
            message="dots",
        ),
    ]


def small_result() -> AuditResult:
    return AuditResult(
        inventory=small_inventory(),
        rules=[HA_01, GPU_02],
        findings=small_findings(),
        simulations=[],
        checked_at=CHECKED_AT,
        tool_version="9.9.9",
        rules_version="2026.12.3",
        errors=[RuleError(rule="DS-01", error="KeyError: 'x'")],
        first_seen={ID_HA_GPU_A: FIRST_SEEN},
    )


def declared_passthrough_result() -> AuditResult:
    """small_result() over passthrough_estate(): powered-on passthrough VMs pv1 and pv2
    in cluster pt, where LIC-01 found pv1's guest declared NVIDIA AI Enterprise by the
    policy and pv2's not declared at all."""
    declared = Finding(
        "LIC-01",
        "pv1",
        "vm",
        "pass",
        "info",
        "declared",
        "pt",
        evidence={"passthrough": True, "declared_by": "policy", "edition": "NVIDIA AI Enterprise"},
    )
    return dataclasses.replace(
        small_result(), inventory=passthrough_estate().inv, findings=[declared]
    )
