"""The policy: design intent per cluster, waivers and severity overrides.

Plain data the rules read. gpuaudit.model.policy_file reads it from a policy file
(docs/policy.md describes the format); this module knows nothing of files or of
the rule catalogue.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from fnmatch import fnmatchcase
from typing import Any

from gpuaudit.results import Severity, Waiver


@dataclass(frozen=True)
class Intent:
    """What the GPU HA decision flow (docs/policy.md) asks about a workload. The defaults
    are its recommended default path: stateless inference, a 2-5 minute restart is
    acceptable, no VM-level HA mandate, no GPU sharing."""

    stateless: bool = True
    max_restart_minutes: float = 5.0  # the restart time the business accepts
    vm_ha_mandated: bool = False  # infrastructure policy requires VMware HA
    gpu_sharing_required: bool = False
    budget_constrained: bool = False
    active_active: bool = False  # the application runs active-active across hosts


@dataclass(frozen=True)
class MonitoringPolicy:
    """Thresholds of the monitoring rules (MON-02 to MON-04)."""

    max_temperature_c: float = 85.0  # MON-02: a higher peak fails
    idle_utilization_percent: float = 5.0  # MON-03: a lower peak fails
    # MON-04: fails when the frame buffer allocated to vGPUs is at least this many
    # times the memory used at peak.
    framebuffer_ratio: float = 2.0


# The largest value of each threshold that can be meant: a percentage is at most
# 100, no GPU runs at 150 °C, a frame buffer is not a thousand times its use.
MONITORING_LIMITS = {
    "max_temperature_c": 150.0,
    "idle_utilization_percent": 100.0,
    "framebuffer_ratio": 1000.0,
}
# A restart that may take longer than a week is no intent to design for.
MAX_RESTART_MINUTES = 7 * 24 * 60.0


# Feature keys that grant shared passthrough graphics (vGPU). vSphere's own key is
# not confirmed; "vgpu" is the lab's. A feature whose name says "shared
# passthrough graphics" (or "Shared Pass-Thru Graphics") counts too.
VGPU_FEATURES = ("vgpu", "sharedPassthruGraphics", "sharedPassthroughGraphics")
# Editions that carry vGPU (shared passthrough graphics), as fnmatch patterns of
# ESXi edition keys: vSphere Enterprise Plus per CPU (cpuPackageCoreLimited) and per
# core (cpuCoreMin), vSphere Foundation (esx.vvf.*), VMware Cloud Foundation 5
# (esx.vcf.cpuCoreMin, "vSphere 8 Enterprise Plus for VCF") and 9
# (esx.vcf.entitlement.cpuCoreMin). An edition on this list allows vGPU even when
# its licence lists no feature gpuaudit recognises.
VGPU_EDITIONS = ("esx.enterprisePlus.*", "esx.vvf.*", "esx.vcf.*")

# The NVIDIA editions a passthrough guest's driver may need, by the names a policy
# gives them; "none" is a guest whose driver needs no NVIDIA licence.
PASSTHROUGH_EDITIONS = {
    "vws": "NVIDIA RTX Virtual Workstation",
    "vpc": "NVIDIA Virtual PC",
    "vapps": "NVIDIA Virtual Applications",
    "nvaie": "NVIDIA AI Enterprise",
    "none": None,
}


@dataclass(frozen=True)
class PassthroughLicence:
    """The NVIDIA edition the guests of passthrough GPUs use, for the clusters or VMs
    whose name matches ``match`` (a name or fnmatch pattern). ``edition`` is a
    full edition name (PASSTHROUGH_EDITIONS' values), or None for no licence."""

    match: str
    edition: str | None


@dataclass(frozen=True)
class LicensingPolicy:
    """What LIC-02 accepts as a licence that allows vGPU, and what LIC-01 takes the
    passthrough guests' NVIDIA edition to be."""

    vgpu_features: tuple[str, ...] = VGPU_FEATURES
    vgpu_editions: tuple[str, ...] = VGPU_EDITIONS  # fnmatch patterns of edition keys
    passthrough: tuple[PassthroughLicence, ...] = ()
    # LIC-02: an evaluation licence this close to its expiry fails (medium).
    evaluation_warning_days: int = 14

    def passthrough_for(self, cluster: str | None, vm: str) -> PassthroughLicence | None:
        """The first entry that names the VM or its cluster, exactly or by pattern."""
        names = [vm] if cluster is None else [vm, cluster]
        for entry in self.passthrough:
            if any(n == entry.match or fnmatchcase(n, entry.match) for n in names):
                return entry
        return None


@dataclass
class ClusterPolicy:
    """Settings for the clusters whose name matches ``match`` (a name or fnmatch pattern)."""

    match: str
    intent: dict[str, Any] = field(default_factory=dict)  # overrides of the default intent
    severity: dict[str, Severity] = field(default_factory=dict)  # rule id -> severity


@dataclass
class Policy:
    source: str | None = None
    intent: Intent = field(default_factory=Intent)
    clusters: list[ClusterPolicy] = field(default_factory=list)
    severity: dict[str, Severity] = field(default_factory=dict)  # rule id -> severity
    waivers: list[Waiver] = field(default_factory=list)
    monitoring: MonitoringPolicy = field(default_factory=MonitoringPolicy)
    licensing: LicensingPolicy = field(default_factory=LicensingPolicy)
    # The keys of ``intent`` the policy file sets, so that a default is told apart from
    # a declaration (vm_ha_mandated: false is a decision; leaving it out is not).
    intent_declared: frozenset[str] = frozenset()

    @classmethod
    def default(cls) -> Policy:
        """No policy file: the recommended default path, no waivers, no overrides."""
        return cls()

    def cluster_policy(self, cluster: str | None) -> ClusterPolicy | None:
        """The entry for a cluster: an exact name first, else the first matching pattern."""
        if cluster is None:
            return None
        for entry in self.clusters:
            if entry.match == cluster:
                return entry
        return next((e for e in self.clusters if fnmatchcase(cluster, e.match)), None)

    def intent_for(self, cluster: str | None) -> Intent:
        entry = self.cluster_policy(cluster)
        if entry is None or not entry.intent:
            return self.intent
        return dataclasses.replace(self.intent, **entry.intent)

    def ha_mandate_declared(self, cluster: str | None) -> bool | None:
        """Whether the policy mandates VMware HA for a cluster, or None when it does not
        say: the cluster's own intent first, then the default intent. A mandate is always
        a declaration, since the default intent mandates nothing."""
        entry = self.cluster_policy(cluster)
        if entry is not None and "vm_ha_mandated" in entry.intent:
            return bool(entry.intent["vm_ha_mandated"])
        if self.intent.vm_ha_mandated or "vm_ha_mandated" in self.intent_declared:
            return self.intent.vm_ha_mandated
        return None

    def severity_for(self, rule: str, cluster: str | None) -> Severity | None:
        """The overriding severity for a rule's finding, or None to keep the default."""
        entry = self.cluster_policy(cluster)
        if entry is not None and rule in entry.severity:
            return entry.severity[rule]
        return self.severity.get(rule)

    def waiver_for(self, rule: str, obj: str, today: date) -> Waiver | None:
        """The first active waiver that covers a rule's verdict on an object."""
        return next(
            (w for w in self.waivers if _covers(w, rule, obj) and not expired(w, today)), None
        )

    def expired_waiver_for(self, rule: str, obj: str, today: date) -> Waiver | None:
        return next((w for w in self.waivers if _covers(w, rule, obj) and expired(w, today)), None)

    def expired(self, today: date) -> list[Waiver]:
        return [w for w in self.waivers if expired(w, today)]


def expired(waiver: Waiver, today: date) -> bool:
    """A waiver applies up to and including its expiry date."""
    return date.fromisoformat(waiver.expires) < today


def _covers(waiver: Waiver, rule: str, obj: str) -> bool:
    return waiver.rule == rule and (waiver.object == obj or fnmatchcase(obj, waiver.object))


def unmatched(
    policy: Policy, findings: Iterable[tuple[str, str]], clusters: Iterable[str]
) -> list[str]:
    """One line for each waiver that covers no finding and each cluster pattern that
    names no cluster: a mistyped one would otherwise silently never apply.

    ``findings`` are the (rule, object) pairs of every verdict, passed or failed: a
    waiver of a finding that now passes still names something real.
    """
    pairs = set(findings)
    names = set(clusters)
    lines = [
        f"waiver {w.rule} {w.object!r} (owner {w.owner}) matched no finding"
        for w in policy.waivers
        if not any(_covers(w, rule, obj) for rule, obj in pairs)
    ]
    lines += [
        f"cluster pattern {c.match!r} of the policy matched no cluster"
        for c in policy.clusters
        if not any(c.match == name or fnmatchcase(name, c.match) for name in names)
    ]
    return lines
