"""K8S-02's placement against brute force on small random Kubernetes clusters.

The reference below re-implements the scheduler's filters from the Kubernetes
documentation (a pod fits a node when the node has the GPU resources it requests
left, its labels satisfy the pod's nodeSelector and one term of its required node
affinity, and the pod tolerates the node's NoSchedule and NoExecute taints),
enumerates every assignment of a lost host's GPU pods to the remaining nodes, and
keeps the most pods placed. The analysis must place as many, never call a pod
pending when a placement exists, and every placement it reports must be valid.
"""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuaudit.inventory import Host, Inventory, Vm
from gpuaudit.kubernetes.model import Cluster, Node, Pod, Requirement, Taint, Toleration
from gpuaudit.kubernetes.simulate import analyse, best_placement
from gpuaudit.model.facts import Facts

RESOURCES = ["nvidia.com/gpu", "nvidia.com/mig-1g.10gb"]
HOSTS = ["esx-1", "esx-2", "esx-3"]
POOLS = ["a", "b"]


def uuid_of(i: int) -> str:
    return f"{i:08x}-0000-4000-8000-000000000000"


# --- the reference: the documented filters, written out separately --------------------


def label_term_holds(term: list[Requirement], labels: dict[str, str]) -> bool:
    if not term:  # an empty term selects no node
        return False
    for r in term:
        has = r.key in labels
        if r.operator == "In" and not (has and labels[r.key] in r.values):
            return False
        if r.operator == "NotIn" and has and labels[r.key] in r.values:
            return False
        if r.operator == "Exists" and not has:
            return False
        if r.operator == "DoesNotExist" and has:
            return False
    return True


def taint_tolerated(taint: Taint, tolerations: list[Toleration]) -> bool:
    for t in tolerations:
        effect_ok = t.effect in ("", taint.effect)
        if t.operator == "Exists":
            key_ok = t.key in ("", taint.key)
            if key_ok and effect_ok:
                return True
        elif t.key == taint.key and t.value == taint.value and effect_ok:
            return True
    return False


def may_run(pod: Pod, node: Node) -> bool:
    if any(node.labels.get(k) != v for k, v in pod.node_selector.items()):
        return False
    if pod.affinity is not None and not any(
        label_term_holds(term, node.labels) for term in pod.affinity
    ):
        return False
    return all(
        taint_tolerated(t, pod.tolerations)
        for t in node.taints
        if t.effect in ("NoSchedule", "NoExecute")
    )


def most_placed(pods: list[Pod], nodes: list[Node], free: list[dict[str, int]]) -> int:
    best = 0
    for choice in itertools.product([None, *range(len(nodes))], repeat=len(pods)):
        used = [dict.fromkeys(RESOURCES, 0) for _ in nodes]
        ok = True
        for pod, n in zip(pods, choice, strict=True):
            if n is None:
                continue
            if not may_run(pod, nodes[n]):
                ok = False
                break
            for r, k in pod.requests.items():
                used[n][r] += k
        if ok and all(
            # the scheduler checks only the resources the pods request
            used[n][r] <= free[n].get(r, 0)
            for n in range(len(nodes))
            for r in RESOURCES
            if used[n][r]
        ):
            best = max(best, sum(c is not None for c in choice))
    return best


# --- random clusters ----------------------------------------------------------------------

requests = st.dictionaries(st.sampled_from(RESOURCES), st.integers(1, 2), max_size=2)
requirement = st.builds(
    Requirement,
    key=st.just("pool"),
    operator=st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist"]),
    values=st.lists(st.sampled_from(POOLS), min_size=1, max_size=2).map(tuple),
)
toleration = st.builds(
    Toleration,
    key=st.sampled_from(["", "dedicated"]),
    operator=st.sampled_from(["Equal", "Exists"]),
    value=st.sampled_from(["", "batch"]),
    effect=st.sampled_from(["", "NoSchedule", "NoExecute"]),
)


@st.composite
def clusters(draw: Any) -> tuple[Cluster, Inventory]:
    n_nodes = draw(st.integers(2, 5))
    nodes, vms = [], []
    for i in range(n_nodes):
        labels = {}
        pool = draw(st.sampled_from([*POOLS, None]))
        if pool:
            labels["pool"] = pool
        taints = draw(
            st.lists(
                st.builds(
                    Taint,
                    key=st.just("dedicated"),
                    value=st.sampled_from(["batch", "infer"]),
                    effect=st.sampled_from(["NoSchedule", "NoExecute", "PreferNoSchedule"]),
                ),
                max_size=1,
            )
        )
        allocatable = draw(st.dictionaries(st.sampled_from(RESOURCES), st.integers(0, 3)))
        allocatable.setdefault("nvidia.com/gpu", 1)
        nodes.append(
            Node(
                f"n{i}",
                provider_id=f"vsphere://{uuid_of(i)}",
                labels=labels,
                taints=taints,
                allocatable=allocatable,
            )
        )
        vms.append(
            Vm(
                name=f"vm{i}",
                moref=f"vm-{i}",
                host=draw(st.sampled_from(HOSTS)),
                cluster="c",
                power_state="poweredOn",
                bios_uuid=uuid_of(i),
            )
        )
    pods = []
    for j in range(draw(st.integers(1, 6))):
        affinity = draw(
            st.none() | st.lists(st.lists(requirement, max_size=2), min_size=1, max_size=2)
        )
        pods.append(
            Pod(
                "ns",
                f"p{j}",
                node=f"n{draw(st.integers(0, n_nodes - 1))}",
                phase="Running",
                requests=draw(requests),
                node_selector=draw(st.sampled_from([{}, {"pool": "a"}, {"pool": "b"}])),
                affinity=affinity,
                tolerations=draw(st.lists(toleration, max_size=2)),
                daemonset=draw(st.booleans()) and j == 0,
            )
        )
    inventory = Inventory(
        hosts=[Host(name=h, moref=h, cluster="c") for h in HOSTS],
        vms=vms,
    )
    return Cluster("k", "k.json", nodes, pods), inventory


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_each_host_loss_places_as_many_gpu_pods_as_brute_force(
    drawn: tuple[Cluster, Inventory],
) -> None:
    cluster, inventory = drawn
    report = analyse(cluster, Facts(inventory))
    host_of = {f"n{i}": vm.host for i, vm in enumerate(inventory.vms)}
    by_name = {n.name: n for n in cluster.nodes}
    pods = {p.key: p for p in cluster.pods}
    for loss in report.losses:
        remaining = [n for n in cluster.nodes if host_of[n.name] != loss.host]
        free = []
        for node in remaining:
            room = dict(node.allocatable)
            for p in cluster.pods:
                if p.node == node.name:
                    for r, k in p.requests.items():
                        room[r] = room.get(r, 0) - k
            free.append(room)
        displaced = [
            p
            for p in cluster.pods
            if host_of[str(p.node)] == loss.host and not p.daemonset and p.gpu
        ]
        assert sorted(m.pod for m in loss.moves) == sorted(p.key for p in displaced)
        assert loss.proven
        placed = [m for m in loss.moves if m.to_node is not None]
        assert len(placed) == most_placed(displaced, remaining, free)
        # every reported placement is valid, together
        used: dict[str, dict[str, int]] = {}
        for m in placed:
            pod, node = pods[m.pod], by_name[str(m.to_node)]
            assert host_of[node.name] != loss.host
            assert may_run(pod, node)
            for r, k in pod.requests.items():
                used.setdefault(node.name, {}).setdefault(r, 0)
                used[node.name][r] += k
        for name, taken in used.items():
            room = free[[n.name for n in remaining].index(name)]
            assert all(k <= room.get(r, 0) for r, k in taken.items())


def test_a_search_that_hits_its_bound_says_it_is_not_proven() -> None:
    # Six pods that fit nowhere together, and a budget too small to prove it.
    demands = [{"nvidia.com/gpu": 2}] * 6
    free = [{"nvidia.com/gpu": 3}] * 4
    allowed = [[True] * 4 for _ in demands]
    assert best_placement(demands, free, allowed, budget=3).proven is False
    full = best_placement(demands, free, allowed)
    assert full.proven and full.placed == 4
