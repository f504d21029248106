"""A rolling-upgrade plan per cluster: an order in which its hosts enter maintenance mode
one at a time, as vSphere Lifecycle Manager remediates them (each host comes back before
the next goes), with the least GPU VM downtime.

Each step is gpuaudit.plan.maintenance's evaluation of one host on the cluster as the
earlier steps left it: a VM moved by an earlier step stays where it went; a VM powered
off or blocking is powered on again on its own host once that host is back. The downtime
of an order is the count of GPU VMs powered off or blocking, summed over its steps.

Every order is tried for a cluster of up to ``EXHAUSTIVE_HOSTS`` hosts (the best, ties
broken by the host names, first host first); beyond, each step takes the host with the
least downtime then (ties by name), and the plan says it was chosen greedily.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping

from gpuaudit.inventory import Cluster, GpuAttachment, Host, Inventory
from gpuaudit.model.facts import Facts
from gpuaudit.plan.maintenance import readiness
from gpuaudit.results import MOVED, ClusterRolling, HostMaintenance, RollingStep
from gpuaudit.rules.registry import Context

EXHAUSTIVE_HOSTS = 8

# vm -> (its host, the PCI ids of the GPUs it runs on): where earlier steps moved it.
Moves = tuple[tuple[str, tuple[str, tuple[str, ...]]], ...]


def rolling_all(ctx: Context) -> list[ClusterRolling]:
    """The rolling-upgrade plan of every cluster that runs GPU VMs."""
    return [
        rolling(ctx, cluster)
        for cluster in ctx.facts.clusters_with_gpus()
        if ctx.facts.cluster_gpu_vms(cluster.name)
    ]


def rolling(ctx: Context, cluster: Cluster) -> ClusterRolling:
    """The order of the cluster's active hosts with the least GPU VM downtime."""
    planner = _Planner(ctx, cluster)
    hosts = sorted(h.host for h in readiness(ctx, cluster).hosts)
    out = ClusterRolling(cluster.name, exhaustive=len(hosts) <= EXHAUSTIVE_HOSTS)
    if out.exhaustive:
        cost, steps = planner.best((), frozenset(hosts))
    else:
        cost, steps = planner.greedy(hosts)
        out.notes.append(
            f"{len(hosts)} hosts, more than {EXHAUSTIVE_HOSTS}: each step takes the host "
            "with the least downtime then; a better order may exist"
        )
    out.steps, out.downtime = steps, cost
    out.order = [s.host for s in steps]
    if cost:
        said = "no order avoids" if out.exhaustive else "this order does not avoid"
        out.notes.append(f"{said} GPU VM downtime: {cost} powered off or blocking in all")
    return out


def _downtime(step: RollingStep) -> int:
    return sum(1 for v in step.vms if v.fate != MOVED)


class _Planner:
    def __init__(self, ctx: Context, cluster: Cluster) -> None:
        self.ctx = ctx
        self.cluster = cluster
        self.evaluated: dict[tuple[Moves, str], RollingStep] = {}
        self.solved: dict[tuple[Moves, frozenset[str]], tuple[int, list[RollingStep]]] = {}

    def step(self, moves: Moves, host: str) -> RollingStep:
        """The host entering maintenance mode with the VMs where ``moves`` put them."""
        key = (moves, host)
        if key not in self.evaluated:
            ctx = self.ctx
            if moves:
                ctx = Context(
                    facts=Facts(_moved(ctx.facts.inventory, dict(moves))),
                    policy=ctx.policy,
                    simulations=ctx.simulations,
                    today=ctx.today,
                )
            found: list[HostMaintenance] = readiness(ctx, self.cluster, only={host}).hosts
            self.evaluated[key] = RollingStep(host, found[0].vms if found else [])
        return self.evaluated[key]

    def best(self, moves: Moves, left: frozenset[str]) -> tuple[int, list[RollingStep]]:
        """The least downtime of the hosts ``left``, and its steps."""
        if not left:
            return 0, []
        key = (moves, left)
        if key not in self.solved:
            best: tuple[int, list[RollingStep]] | None = None
            for host in sorted(left):
                step = self.step(moves, host)
                cost, rest = self.best(_after(moves, step), left - {host})
                cost += _downtime(step)
                if best is None or cost < best[0]:
                    best = (cost, [step, *rest])
            assert best is not None
            self.solved[key] = best
        return self.solved[key]

    def greedy(self, hosts: list[str]) -> tuple[int, list[RollingStep]]:
        """Each step the host with the least downtime then, ties by name."""
        moves: Moves = ()
        left = list(hosts)
        steps: list[RollingStep] = []
        while left:
            step = min((self.step(moves, h) for h in left), key=lambda s: (_downtime(s), s.host))
            steps.append(step)
            left.remove(step.host)
            moves = _after(moves, step)
        return sum(_downtime(s) for s in steps), steps


def _after(moves: Moves, step: RollingStep) -> Moves:
    """``moves`` with the VMs the step moved where they went."""
    where = dict(moves)
    for v in step.vms:
        if v.fate == MOVED and v.to_host:
            gpus = tuple(p.strip() for p in (v.to_gpu or "").split(",") if p.strip())
            where[v.vm] = (v.to_host, gpus)
    return tuple(sorted(where.items()))


def _moved(inventory: Inventory, where: Mapping[str, tuple[str, tuple[str, ...]]]) -> Inventory:
    """A copy of the inventory with each VM of ``where`` running on its host and GPUs,
    as the collector would read it after the vMotion."""
    out = copy.deepcopy(inventory)
    hosts = {h.name: h for h in out.hosts}
    for vm in out.vms:
        if vm.name not in where:
            continue
        to_host, gpus = where[vm.name]
        old = hosts.get(vm.host or "")
        if old is not None:
            for gpu in old.gpus:
                if vm.name in gpu.vms:
                    gpu.vms.remove(vm.name)
            _count(old, vm.gpus, +1)
        new = hosts[to_host]
        for gpu in new.gpus:
            if gpu.pci_id in gpus:
                gpu.vms.append(vm.name)
        _count(new, vm.gpus, -1)
        vm.host = to_host
    return out


def _count(host: Host, attachments: list[GpuAttachment], change: int) -> None:
    """vCenter's remaining capacity of the host's profiles, as a VM leaves or arrives."""
    profiles = {a.profile.lower() for a in attachments if a.kind == "vgpu" and a.profile}
    for p in host.vgpu_profiles:
        if p.name.lower() in profiles and p.capacity is not None:
            p.capacity.remaining = max(0, p.capacity.remaining + change)
