"""Kubernetes over vSphere: which VM each node is, and where a lost host's GPU pods go.

Designs A and C leave the restart of passthrough GPU work to Kubernetes: vSphere HA
cannot restart a VM bound to a host's GPU, so the scheduler must find room for the
pods of the lost nodes on the nodes that remain. This module checks that.

Each node is matched to its VM by the VM's BIOS UUID (``config.uuid``): the node's
``spec.providerID`` (``vsphere://<uuid>``) or its ``status.nodeInfo.systemUUID``.
Some releases report the systemUUID with its first three groups byte-swapped
(little-endian, as SMBIOS stores them); both forms match.

For every ESXi host that runs a GPU node, the host is lost with every node on it.
The lost nodes' GPU pods (Running or Pending, not owned by a DaemonSet) are placed
on the remaining nodes as the scheduler's filters would allow: the GPU resources
(``nvidia.com/gpu`` and ``nvidia.com/mig-*``) the node has left after the pods bound
to it, the pod's nodeSelector, its required node affinity (In, NotIn, Exists,
DoesNotExist, Gt, Lt; the terms ORed, the expressions of a term ANDed), and the
node's NoSchedule and NoExecute taints against the pod's tolerations. A node whose
VM is not found, is powered off, or that is cordoned takes nothing. Other resources
(CPU, memory) are not checked.

Guarantee: a pod is reported as staying pending only when no valid placement puts
more pods on the remaining nodes. A first-fit pass runs first; when it leaves pods
out, an exact branch-and-bound search finds the largest number of pods that fit.
The search is bounded; a failure whose search hits the bound says so (``proven``
is False). tests/kubernetes/test_simulate_property.py checks the search against brute force.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from gpuaudit.inventory import Vm
from gpuaudit.kubernetes.model import (
    ACTIVE_PHASES,
    BLOCKING_EFFECTS,
    FIELD_PREFIX,
    Cluster,
    HostLoss,
    KubernetesReport,
    Node,
    NodeRow,
    Pod,
    PodMove,
    Requirement,
    Toleration,
)
from gpuaudit.model.facts import Facts

SEARCH_BUDGET = 200_000  # search nodes visited per host loss before giving up the proof


def swap_uuid(text: str) -> str:
    """The UUID with its first three groups byte-swapped (little-endian), or "" if it is
    not a UUID."""
    parts = text.lower().split("-")
    if [len(p) for p in parts] != [8, 4, 4, 4, 12]:
        return ""

    def swap(group: str) -> str:
        return "".join(reversed([group[i : i + 2] for i in range(0, len(group), 2)]))

    return "-".join([swap(parts[0]), swap(parts[1]), swap(parts[2]), parts[3], parts[4]])


def node_uuids(node: Node) -> list[tuple[str, str]]:
    """(UUID as the VM's BIOS UUID would read, how it was found), best evidence first."""
    out: list[tuple[str, str]] = []
    if node.provider_id.lower().startswith("vsphere://"):
        out.append((node.provider_id[len("vsphere://") :].strip().lower(), "providerID"))
    if node.system_uuid:
        out.append((node.system_uuid.strip().lower(), "systemUUID"))
        swapped = swap_uuid(node.system_uuid.strip())
        if swapped:
            out.append((swapped, "systemUUID (byte-swapped)"))
    return out


def match_nodes(cluster: Cluster, facts: Facts) -> list[NodeRow]:
    by_uuid: dict[str, Vm] = {}
    for vm in facts.inventory.vms:
        if vm.bios_uuid:
            by_uuid.setdefault(vm.bios_uuid.lower(), vm)
    rows = []
    for node in cluster.nodes:
        row = NodeRow(
            node=node.name,
            gpu_node=node.gpu,
            product=node.product,
            allocatable=dict(node.allocatable),
        )
        for uuid, how in node_uuids(node):
            found = by_uuid.get(uuid)
            if found is not None:
                row.vm, row.matched_by, row.host = found.name, how, found.host
                row.vsphere_cluster, row.power_state = facts.vm_cluster(found), found.power_state
                break
        rows.append(row)
    return rows


# --- the scheduler's filters ---------------------------------------------------------------


def _requirement_holds(req: Requirement, node: Node) -> bool:
    if req.key.startswith(FIELD_PREFIX):
        value: str | None = node.name if req.key == FIELD_PREFIX + "metadata.name" else None
    else:
        value = node.labels.get(req.key)
    op = req.operator
    if op == "In":
        return value is not None and value in req.values
    if op == "NotIn":
        return value is None or value not in req.values
    if op == "Exists":
        return value is not None
    if op == "DoesNotExist":
        return value is None
    if op in ("Gt", "Lt") and value is not None and len(req.values) == 1:
        try:
            have, want = int(value), int(req.values[0])
        except ValueError:
            return False
        return have > want if op == "Gt" else have < want
    return False


def _tolerated(tolerations: Iterable[Toleration], key: str, value: str, effect: str) -> bool:
    for t in tolerations:
        if t.effect and t.effect != effect:
            continue
        if t.operator == "Exists" and (not t.key or t.key == key):
            return True
        if t.operator != "Exists" and t.key == key and t.value == value:
            return True
    return False


def why_not(pod: Pod, node: Node) -> str | None:
    """Why the scheduler's filters keep ``pod`` off ``node`` whatever its free room, or None."""
    for key, want in pod.node_selector.items():
        if node.labels.get(key) != want:
            return f"nodeSelector {key}={want}"
    if pod.affinity is not None and not any(
        term and all(_requirement_holds(r, node) for r in term) for term in pod.affinity
    ):
        return "required node affinity"
    for taint in node.taints:
        if taint.effect in BLOCKING_EFFECTS and not _tolerated(
            pod.tolerations, taint.key, taint.value, taint.effect
        ):
            return f"taint {taint.key}={taint.value}:{taint.effect}"
    return None


# --- the exact search ----------------------------------------------------------------------


@dataclass
class Placement:
    """Where each pod goes (a node index, or None), and whether that is proven the most."""

    targets: list[int | None]
    proven: bool = True

    @property
    def placed(self) -> int:
        return sum(t is not None for t in self.targets)


def _fits(demand: dict[str, int], free: dict[str, int]) -> bool:
    return all(free.get(r, 0) >= n for r, n in demand.items())


def _take(free: dict[str, int], demand: dict[str, int], sign: int) -> None:
    for r, n in demand.items():
        free[r] = free.get(r, 0) - sign * n


def first_fit(
    demands: Sequence[dict[str, int]],
    free: Sequence[dict[str, int]],
    allowed: Sequence[Sequence[bool]],
) -> Placement:
    """Each pod, largest first, on the first allowed node it fits."""
    room = [dict(f) for f in free]
    targets: list[int | None] = [None] * len(demands)
    for p in sorted(range(len(demands)), key=lambda i: -sum(demands[i].values())):
        for n, left in enumerate(room):
            if allowed[p][n] and _fits(demands[p], left):
                _take(left, demands[p], 1)
                targets[p] = n
                break
    return Placement(targets)


def best_placement(
    demands: Sequence[dict[str, int]],
    free: Sequence[dict[str, int]],
    allowed: Sequence[Sequence[bool]],
    budget: int = SEARCH_BUDGET,
) -> Placement:
    """A placement of the most pods: pod p may go to node n when ``allowed[p][n]`` and
    the node's ``free`` room covers its ``demands``; the pods on a node share its room."""
    best = first_fit(demands, free, allowed)
    if best.placed == len(demands):
        return best
    # Most constrained pods first: fewest allowed nodes, then the largest.
    order = sorted(
        range(len(demands)),
        key=lambda p: (sum(allowed[p]), -sum(demands[p].values()), p),
    )
    room = [dict(f) for f in free]
    current: list[int | None] = [None] * len(demands)
    most, targets, visits = best.placed, list(best.targets), 0

    def search(depth: int, placed: int) -> bool:
        """False once the budget is spent."""
        nonlocal most, targets, visits
        visits += 1
        if visits > budget:
            return False
        if placed > most:
            most, targets = placed, list(current)
        if depth == len(order):
            return True
        rest = order[depth:]
        # Bound: the pods left that fit somewhere now, were each placed alone.
        could = sum(
            1
            for p in rest
            if any(allowed[p][n] and _fits(demands[p], room[n]) for n in range(len(room)))
        )
        if placed + could <= most:
            return True
        p = order[depth]
        tried: set[tuple[object, ...]] = set()
        for n in range(len(room)):
            if not allowed[p][n] or not _fits(demands[p], room[n]):
                continue
            # Two nodes alike in room and in which of the remaining pods they take lead
            # to the same outcomes: try one of them.
            shape = (
                tuple(sorted(room[n].items())),
                tuple(allowed[q][n] for q in rest),
            )
            if shape in tried:
                continue
            tried.add(shape)
            _take(room[n], demands[p], 1)
            current[p] = n
            going = search(depth + 1, placed + 1)
            current[p] = None
            _take(room[n], demands[p], -1)
            if not going:
                return False
        return search(depth + 1, placed)

    proven = search(0, 0)
    return Placement(targets, proven)


# --- one Kubernetes cluster --------------------------------------------------------------


def analyse(
    cluster: Cluster,
    facts: Facts,
    other_nodes_vms: set[str] | None = None,
    budget: int = SEARCH_BUDGET,
) -> KubernetesReport:
    """The nodes' VMs and the loss of each ESXi host that runs a GPU node.

    ``other_nodes_vms`` names the VMs that are nodes of other Kubernetes clusters given,
    so that they are not reported as unmatched GPU VMs."""
    rows = match_nodes(cluster, facts)
    row_of = {r.node: r for r in rows}
    report = KubernetesReport(cluster=cluster.name, source=cluster.source, nodes=rows)
    usable = {
        n.name
        for n in cluster.nodes
        if not n.unschedulable
        and row_of[n.name].vm is not None
        and row_of[n.name].power_state == "poweredOn"
    }
    report.not_counted = sorted(n.name for n in cluster.nodes if n.name not in usable)
    hosts = sorted(
        {r.host for r in rows if r.gpu_node and r.host is not None and r.power_state == "poweredOn"}
    )
    for host in hosts:
        report.losses.append(_lose(cluster, row_of, usable, host, budget))
    mine = {r.vm for r in rows if r.vm is not None}
    theirs = other_nodes_vms or set()
    vsphere = {r.vsphere_cluster for r in rows if r.vsphere_cluster is not None}
    report.unmatched_gpu_vms = sorted(
        vm.name
        for c in sorted(vsphere)
        for vm in facts.cluster_gpu_vms(c)
        if vm.name not in mine and vm.name not in theirs
    )
    return report


def _lose(
    cluster: Cluster,
    row_of: dict[str, NodeRow],
    usable: set[str],
    host: str,
    budget: int,
) -> HostLoss:
    lost = [n.name for n in cluster.nodes if row_of[n.name].host == host]
    gone = set(lost)
    remaining = [n for n in cluster.nodes if n.name in usable and n.name not in gone]
    free = []
    for node in remaining:
        room = dict(node.allocatable)
        for pod in cluster.pods:
            if pod.node == node.name and pod.phase in ACTIVE_PHASES:
                _take(room, pod.requests, 1)
        free.append(room)
    displaced = [
        p
        for p in cluster.pods
        if p.node in gone and p.phase in ACTIVE_PHASES and not p.daemonset and p.gpu
    ]
    displaced.sort(key=lambda p: p.key)
    allowed = [[why_not(p, n) is None for n in remaining] for p in displaced]
    placement = best_placement([p.requests for p in displaced], free, allowed, budget)
    moves = []
    for pod, target in zip(displaced, placement.targets, strict=True):
        move = PodMove(pod=pod.key, from_node=pod.node or "", requests=dict(pod.requests))
        if target is not None:
            move.to_node = remaining[target].name
        else:
            move.reason = _pending_reason(pod, remaining, free, why_not)
        moves.append(move)
    return HostLoss(host=host, lost_nodes=sorted(lost), moves=moves, proven=placement.proven)


def _pending_reason(
    pod: Pod,
    remaining: Sequence[Node],
    free: Sequence[dict[str, int]],
    rule_out: Callable[[Pod, Node], str | None],
) -> str:
    if not remaining:
        return "no node remains that can take pods"
    eligible = [i for i, n in enumerate(remaining) if rule_out(pod, n) is None]
    filtered = [f"{n.name} ({rule_out(pod, n)})" for n in remaining if rule_out(pod, n)]
    wanted = ", ".join(f"{n} {r}" for r, n in sorted(pod.requests.items()))
    if not eligible:
        said = "no remaining node passes its filters"
    elif not any(_fits(pod.requests, free[i]) for i in eligible):
        said = f"no node it may use has {wanted} free"
    else:
        said = f"the free {wanted} of the nodes it may use went to other displaced pods"
    return f"{said}; kept off {', '.join(filtered)}" if filtered else said


def analyse_all(clusters: Sequence[Cluster], facts: Facts) -> list[KubernetesReport]:
    reports = []
    for cluster in clusters:
        others = {
            r.vm
            for other in clusters
            if other is not cluster
            for r in match_nodes(other, facts)
            if r.vm is not None
        }
        reports.append(analyse(cluster, facts, others))
    return reports
