"""The licence summary every report carries: the NVIDIA licences a licence server
must cover, and what each host's vSphere licence allows.

vGPU VMs are counted by the edition their profiles imply. Passthrough VMs are
counted by the edition LIC-01 found declared for their guests in the policy
(licensing.passthrough): vSphere cannot see a guest's driver, so the rule's
evidence, not the inventory, says which they need.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from gpuaudit.inventory import Inventory
from gpuaudit.model import facts as F
from gpuaudit.model.facts import vm_edition
from gpuaudit.results import Finding

PASSTHROUGH_NOTE = (
    "Passthrough GPU VMs count under the edition the policy declares for their guests' "
    "NVIDIA driver (licensing.passthrough)."
)
NO_CLUSTER = "(standalone hosts)"
EDITION_RULE = "LIC-01"


@dataclass
class EditionCount:
    edition: str
    cluster: str  # NO_CLUSTER for VMs on standalone hosts
    powered_on: int = 0  # concurrent licences needed now
    registered: int = 0  # GPU VMs in any power state
    passthrough: int = 0  # of the registered, passthrough VMs whose edition the policy declares


@dataclass
class LicenceSummary:
    # Per cluster and edition, sorted by cluster then edition.
    rows: list[EditionCount] = field(default_factory=list)
    # Edition -> powered-on GPU VMs in the whole estate: what the licence server must cover.
    totals: dict[str, int] = field(default_factory=dict)
    total: int = 0
    passthrough_vms: int = 0  # GPU VMs with passthrough devices only
    note: str = PASSTHROUGH_NOTE
    # Passthrough VMs no policy entry covers: assumed to need no licence.
    passthrough_assumed: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def passthrough_editions(findings: Iterable[Finding]) -> dict[str, str | None]:
    """VM name -> the edition LIC-01 found for its passthrough guest (None: no
    licence); a VM no policy entry covers is absent."""
    out: dict[str, str | None] = {}
    for f in findings:
        if (
            f.rule == EDITION_RULE
            and f.evidence.get("passthrough")
            and f.evidence.get("declared_by")
        ):
            out[f.object] = f.evidence.get("edition")
    return out


def licence_summary(inv: Inventory, findings: Iterable[Finding] = ()) -> LicenceSummary:
    counts: dict[tuple[str, str], EditionCount] = {}
    summary = LicenceSummary()
    declared = passthrough_editions(findings)
    for vm in inv.vms:
        if not F.is_gpu_vm(vm):
            continue
        edition = vm_edition(vm)
        passthrough = edition is None
        if edition is None:
            summary.passthrough_vms += 1
            if vm.name not in declared:
                summary.passthrough_assumed += 1
            edition = declared.get(vm.name)
            if edition is None:
                continue
        cluster = vm.cluster or NO_CLUSTER
        row = counts.setdefault((cluster, edition), EditionCount(edition, cluster))
        row.registered += 1
        row.passthrough += passthrough
        if vm.powered_on:
            row.powered_on += 1
            summary.totals[edition] = summary.totals.get(edition, 0) + 1
            summary.total += 1
    summary.rows = [counts[k] for k in sorted(counts)]
    summary.totals = dict(sorted(summary.totals.items()))
    if summary.passthrough_assumed:
        n = summary.passthrough_assumed
        summary.note += (
            f" {n} passthrough GPU VM{'s' if n != 1 else ''} with no edition declared "
            f"{'are' if n != 1 else 'is'} assumed to need no NVIDIA licence."
        )
    return summary
