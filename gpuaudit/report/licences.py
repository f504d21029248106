"""The licence summary every report carries: the NVIDIA vGPU licences a licence
server must cover, and what each host's vSphere licence allows."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from gpuaudit import facts as F
from gpuaudit.facts import vm_edition
from gpuaudit.inventory import Inventory

PASSTHROUGH_NOTE = "Passthrough GPUs need no NVIDIA vGPU licence."
NO_CLUSTER = "(standalone hosts)"


@dataclass
class EditionCount:
    edition: str
    cluster: str  # NO_CLUSTER for VMs on standalone hosts
    powered_on: int = 0  # concurrent licences needed now
    registered: int = 0  # vGPU VMs in any power state


@dataclass
class LicenceSummary:
    # Per cluster and edition, sorted by cluster then edition.
    rows: list[EditionCount] = field(default_factory=list)
    # Edition -> powered-on vGPU VMs in the whole estate: what the licence server must cover.
    totals: dict[str, int] = field(default_factory=dict)
    total: int = 0
    passthrough_vms: int = 0  # GPU VMs with passthrough devices only
    note: str = PASSTHROUGH_NOTE

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def licence_summary(inv: Inventory) -> LicenceSummary:
    counts: dict[tuple[str, str], EditionCount] = {}
    summary = LicenceSummary()
    for vm in inv.vms:
        if not F.is_gpu_vm(vm):
            continue
        edition = vm_edition(vm)
        if edition is None:
            summary.passthrough_vms += 1
            continue
        cluster = vm.cluster or NO_CLUSTER
        row = counts.setdefault((cluster, edition), EditionCount(edition, cluster))
        row.registered += 1
        if vm.powered_on:
            row.powered_on += 1
            summary.totals[edition] = summary.totals.get(edition, 0) + 1
            summary.total += 1
    summary.rows = [counts[k] for k in sorted(counts)]
    summary.totals = dict(sorted(summary.totals.items()))
    return summary
