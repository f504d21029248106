"""The DRS rules that vSphere HA honours when it restarts a failed host's VMs.

After VMware's "vSphere Availability" guide, "vSphere HA and DRS Affinity Rules":

- a required ("must") VM-Host rule is never violated: a VM of its VM group restarts
  only on a host of an affine host group, never on a host of an anti-affine one;
- a VM-VM anti-affinity rule is honoured when the HA advanced option
  ``das.respectVmVmAntiAffinityRules`` is true, its default from vSphere 6.5 on (it was
  false in 6.0): HA then does not fail a VM over onto a host that runs another VM of
  the rule, and reports insufficient resources instead;
- a preferential ("should") VM-Host rule only guides HA, which restarts the VM on any
  host when the rule cannot be met (``das.respectVmHostSoftAffinityRules``): it never
  blocks a restart;
- a VM-VM affinity rule is not a failover constraint: HA restarts each VM where it
  fits, and DRS brings them back together later.

Disabled rules are ignored.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuaudit.inventory import Cluster, Inventory

RESPECT_ANTI_AFFINITY = "das.respectVmVmAntiAffinityRules"


@dataclass(frozen=True)
class HostRule:
    """An enabled "must" VM-Host rule, as one VM of its group sees it."""

    name: str
    affine: bool  # must run on the group's hosts; False: must not
    group: str
    hosts: frozenset[str]

    def allows(self, host: str) -> bool:
        return (host in self.hosts) == self.affine

    def describe(self) -> str:
        verb = "must run on" if self.affine else "must not run on"
        hosts = ", ".join(sorted(self.hosts)) or "no host"
        return f"VM-Host rule '{self.name}' ({verb} host group '{self.group}': {hosts})"


def respects_anti_affinity(cluster: Cluster | None) -> bool:
    """das.respectVmVmAntiAffinityRules as set (keys match case-insensitively), else true."""
    value = cluster.ha_option(RESPECT_ANTI_AFFINITY) if cluster is not None else None
    return value is None or value.strip().lower() != "false"


class PlacementRules:
    """The rules of one cluster that bind vSphere HA's restarts."""

    def __init__(self, inventory: Inventory, cluster_name: str) -> None:
        cluster = inventory.cluster(cluster_name)
        self.host_rules: dict[str, list[HostRule]] = {}  # VM -> its must rules
        self.apart_rules: dict[str, list[str]] = {}  # anti-affinity rule -> its VMs
        if cluster is None:
            return
        for rule in cluster.vm_host_rules:
            if not (rule.enabled and rule.mandatory):
                continue
            bound = HostRule(rule.name, rule.affine, rule.host_group, frozenset(rule.hosts))
            for vm in rule.vms:
                self.host_rules.setdefault(vm, []).append(bound)
        if respects_anti_affinity(cluster):
            for vv in cluster.vm_vm_rules:
                if vv.enabled and not vv.affinity and len(set(vv.vms)) > 1:
                    self.apart_rules[vv.name] = sorted(set(vv.vms))

    def for_vm(self, vm: str) -> tuple[HostRule, ...]:
        return tuple(self.host_rules.get(vm, ()))

    def apart(self, vm: str) -> frozenset[str]:
        """The anti-affinity rules (honoured by HA) that name the VM."""
        return frozenset(name for name, vms in self.apart_rules.items() if vm in vms)

    def host_groups(self, host: str) -> frozenset[tuple[str, str]]:
        """The (rule, group) pairs the host belongs to: hosts alike in them are alike."""
        return frozenset(
            (r.name, r.group)
            for rules in self.host_rules.values()
            for r in rules
            if host in r.hosts
        )
