"""K8S-01 to K8S-04 (rules/kubernetes.py): exact messages and evidence, written out by hand.

The Kubernetes reports are built by hand (which VM and host each node is, and which
pods each host loss leaves pending): they are the rules' input, worked out by
gpuaudit.kubernetes.simulate and tested with it, so each case here states them outright.
"""

from __future__ import annotations

from dataclasses import replace

from gpuaudit.inventory import VmVmRule
from gpuaudit.kubernetes.model import HostLoss, KubernetesReport, NodeRow, PodMove
from gpuaudit.rules import kubernetes
from gpuaudit.rules.registry import Context, Verdict
from tests.support.builders import Estate, context

GPU = {"nvidia.com/gpu": 1}


def worker(node: str, host: str, cluster: str = "c1", product: str = "NVIDIA-L4") -> NodeRow:
    """A GPU node whose VM, named after it, runs powered on on ``host`` in ``cluster``."""
    return NodeRow(
        node,
        True,
        product,
        GPU,
        vm=f"vm-{node}",
        matched_by="providerID",
        host=host,
        vsphere_cluster=cluster,
        power_state="poweredOn",
    )


def with_report(report: KubernetesReport, estate: Estate | None = None) -> Context:
    ctx = context((estate or Estate()).inv)
    ctx.kubernetes = [report]
    return ctx


def test_k8s01_evidence_counts_only_gpu_nodes_whose_vm_runs() -> None:
    nodes = [
        worker("gpu-a", "h1", product="NVIDIA-A100"),
        worker("gpu-b", "h2"),
        replace(worker("gpu-off", "h3"), power_state="poweredOff"),
        NodeRow("gpu-elsewhere", True, "NVIDIA-L4", GPU),
        NodeRow("cpu-1", False, vm="vm-cpu-1", host="h1", power_state="poweredOn"),
        NodeRow("cpu-2", False),
    ]
    ctx = with_report(KubernetesReport("k", "k.json", nodes))
    assert list(kubernetes.gpu_nodes_spread(ctx)) == [
        Verdict(
            "k",
            True,
            "the GPU nodes are spread over 2 ESXi hosts",
            {
                "gpu_nodes_by_host": {"h1": ["gpu-a"], "h2": ["gpu-b"]},
                "gpu_nodes_not_counted": ["gpu-elsewhere", "gpu-off"],
            },
        )
    ]


def _k8s02(losses: list[HostLoss]) -> Verdict:
    ctx = with_report(KubernetesReport("k", "k.json", losses=losses, not_counted=["n9"]))
    (verdict,) = kubernetes.reschedulable(ctx)
    return verdict


def test_k8s02_names_each_loss_that_leaves_pods_pending() -> None:
    h1 = HostLoss(
        "h1",
        ["n1"],
        [
            PodMove("ml/a", "n1", GPU, reason="no node has 1 nvidia.com/gpu free"),
            PodMove("ml/b", "n1", GPU, reason="no node has 1 nvidia.com/gpu free"),
            PodMove("ml/c", "n1", GPU, to_node="n3"),
        ],
    )
    h2 = HostLoss("h2", ["n2"], [PodMove("ml/d", "n2", GPU, reason="r")], proven=False)
    h3 = HostLoss("h3", ["n3"], [])
    verdict = _k8s02([h1, h2, h3])
    assert (verdict.object, verdict.passed) == ("k", False)
    assert verdict.message == (
        "the loss of h1 leaves 2 GPU pods pending: ml/a, ml/b; "
        "the loss of h2 leaves 1 GPU pod pending: ml/d (not proven: the search hit its bound)"
    )
    assert verdict.evidence["nodes_not_counted"] == ["n9"]
    assert verdict.evidence["losses"][1] == {
        "host": "h2",
        "lost_nodes": ["n2"],
        "proven": False,
        "moves": [{"pod": "ml/d", "to": None, "reason": "r"}],
    }


def test_k8s02_passing_message_counts_every_displaced_pod() -> None:
    verdict = _k8s02(
        [
            HostLoss("h1", ["n1"], [PodMove("ml/a", "n1", to_node="n2")]),
            HostLoss("h2", ["n2"], [PodMove("ml/b", "n2", to_node="n3")]),
            HostLoss(
                "h3",
                ["n3", "n4"],
                [PodMove("ml/c", "n3", to_node="n1"), PodMove("ml/d", "n4", to_node="n2")],
            ),
        ]
    )
    assert (verdict.passed, verdict.message) == (
        True,
        "after the loss of any one of 3 ESXi hosts, the remaining nodes take the lost "
        "nodes' GPU pods (4 displaced in all)",
    )


def _drs(*names: str, on: bool = True) -> Estate:
    e = Estate()
    for name in names:
        e.cluster(name).drs_enabled = on
    return e


def test_k8s03_two_gpu_workers_without_a_rule_are_not_kept_apart() -> None:
    report = KubernetesReport("k", "k.json", [worker("w1", "h1"), worker("w2", "h2")])
    ctx = with_report(report, _drs("c1"))
    assert list(kubernetes.gpu_workers_kept_apart(ctx)) == [
        Verdict("k", False, "c1: vm-w1 and vm-w2", {"not_kept_apart": {"c1": ["vm-w1 and vm-w2"]}})
    ]


def test_k8s03_only_an_enabled_anti_affinity_rule_keeps_workers_apart() -> None:
    report = KubernetesReport("k", "k.json", [worker("w1", "h1"), worker("w2", "h2")])
    e = _drs("c1")
    rules = e.inv.clusters[0].vm_vm_rules
    rules.append(VmVmRule("off", enabled=False, vms=["vm-w1", "vm-w2"]))
    rules.append(VmVmRule("together", affinity=True, vms=["vm-w1", "vm-w2"]))
    assert kubernetes.not_kept_apart(with_report(report, e), report) == {"c1": ["vm-w1 and vm-w2"]}
    rules.append(VmVmRule("apart", vms=["vm-w1", "vm-w2"]))
    assert kubernetes.not_kept_apart(with_report(report, e), report) == {}


def test_k8s03_counts_only_gpu_nodes_whose_vm_runs_in_a_cluster() -> None:
    report = KubernetesReport(
        "k",
        "k.json",
        [
            worker("w1", "h1"),
            replace(worker("w-off", "h2"), power_state="poweredOff"),
            replace(worker("cpu-1", "h2"), gpu_node=False, product=None, allocatable={}),
            NodeRow("w-elsewhere", True, "NVIDIA-L4", GPU),
        ],
    )
    ctx = with_report(report, _drs("c1"))
    assert kubernetes.not_kept_apart(ctx, report) == {}
    assert list(kubernetes.gpu_workers_kept_apart(ctx)) == [
        Verdict(
            "k",
            True,
            "an enabled DRS anti-affinity rule keeps each pair of GPU worker VMs apart",
            {"not_kept_apart": {}},
        )
    ]


def test_k8s03_judges_every_vsphere_cluster_of_the_kubernetes_cluster() -> None:
    report = KubernetesReport(
        "k",
        "k.json",
        [
            worker("a1", "h1", "a"),
            worker("b1", "h2", "b"),
            worker("b2", "h3", "b"),
            worker("c1", "h4", "c"),
            worker("c2", "h5", "c"),
        ],
    )
    e = _drs("a", "c")
    e.cluster("b").drs_enabled = False
    (verdict,) = kubernetes.gpu_workers_kept_apart(with_report(report, e))
    assert (verdict.passed, verdict.message) == (
        False,
        "b: DRS is off, so no VM-VM rule keeps them apart; c: vm-c1 and vm-c2",
    )


def test_k8s04_fails_a_node_whose_vm_is_off_or_missing_and_a_cpu_nodes_only_low() -> None:
    nodes = [
        worker("gpu-a", "h1"),
        replace(worker("gpu-off", "h2"), power_state="poweredOff"),
        NodeRow("cpu-gone", False),
    ]
    ctx = with_report(KubernetesReport("k", "k.json", nodes))
    assert list(kubernetes.node_vm_found(ctx)) == [
        Verdict(
            "k/gpu-a",
            True,
            "runs as VM vm-gpu-a on h1 (matched by providerID)",
            {
                "kubernetes_cluster": "k",
                "vm": "vm-gpu-a",
                "matched_by": "providerID",
                "power_state": "poweredOn",
            },
            cluster="c1",
            host="h1",
        ),
        Verdict(
            "k/gpu-off",
            False,
            "the node's VM vm-gpu-off is poweredOff",
            {
                "kubernetes_cluster": "k",
                "vm": "vm-gpu-off",
                "matched_by": "providerID",
                "power_state": "poweredOff",
            },
            cluster="c1",
            host="h2",
        ),
        # a node without GPUs matters less: low, whatever the rule's severity
        Verdict(
            "k/cpu-gone",
            False,
            "no VM of the inventory has the node's providerID or systemUUID",
            {
                "kubernetes_cluster": "k",
                "vm": None,
                "matched_by": None,
                "power_state": None,
            },
            severity="low",
        ),
    ]


def test_k8s03_a_cluster_with_no_gpu_worker_located_leaves_the_next_one_judged() -> None:
    elsewhere = KubernetesReport("far", "far.json", [NodeRow("w-far", True, "NVIDIA-L4", GPU)])
    near = KubernetesReport("k", "k.json", [worker("w1", "h1"), worker("w2", "h2")])
    ctx = with_report(near, _drs("c1"))
    ctx.kubernetes = [elsewhere, near]
    assert list(kubernetes.gpu_workers_kept_apart(ctx)) == [
        Verdict("k", False, "c1: vm-w1 and vm-w2", {"not_kept_apart": {"c1": ["vm-w1 and vm-w2"]}})
    ]


def test_k8s01_joins_two_problems_and_judges_the_cluster_after_one_without_gpu_nodes() -> None:
    cpu_only = KubernetesReport("cpu", "cpu.json", [NodeRow("cpu-1", False)])
    nodes = [
        worker("gpu-a", "h1", product="NVIDIA-A100"),
        worker("gpu-b", "h1", product="NVIDIA-A100"),
        worker("gpu-c", "h2"),
    ]
    ctx = with_report(KubernetesReport("k", "k.json", nodes))
    ctx.kubernetes = [cpu_only, *ctx.kubernetes]
    assert list(kubernetes.gpu_nodes_spread(ctx)) == [
        Verdict(
            "k",
            False,
            "h1 carries 2 of the 3 GPU nodes; h1 carries all 2 NVIDIA-A100 nodes",
            {
                "gpu_nodes_by_host": {"h1": ["gpu-a", "gpu-b"], "h2": ["gpu-c"]},
                "gpu_nodes_not_counted": [],
            },
        )
    ]


def test_k8s02_judges_the_cluster_after_one_without_host_losses() -> None:
    calm = KubernetesReport("calm", "calm.json")
    ctx = with_report(
        KubernetesReport(
            "k",
            "k.json",
            losses=[HostLoss("h1", ["n1"], []), HostLoss("h2", ["n2"], [])],
            not_counted=[],
        )
    )
    ctx.kubernetes = [calm, *ctx.kubernetes]
    (verdict,) = kubernetes.reschedulable(ctx)
    assert (verdict.object, verdict.passed, verdict.message) == (
        "k",
        True,
        "after the loss of any one of 2 ESXi hosts, the remaining nodes take the lost "
        "nodes' GPU pods (0 displaced in all)",
    )
    assert verdict.evidence == {
        "losses": [
            {"host": "h1", "lost_nodes": ["n1"], "proven": True, "moves": []},
            {"host": "h2", "lost_nodes": ["n2"], "proven": True, "moves": []},
        ],
        "nodes_not_counted": [],
    }


def test_k8s03_is_silent_without_a_powered_on_gpu_worker_vm_in_a_cluster() -> None:
    report = KubernetesReport(
        "k",
        "k.json",
        [
            # a CPU node whose VM runs in c1, and a GPU node with no VM found
            replace(worker("cpu-1", "h1"), gpu_node=False, product=None, allocatable={}),
            replace(worker("w-lost", "h2"), vm=None, vsphere_cluster=None),
        ],
    )
    assert list(kubernetes.gpu_workers_kept_apart(with_report(report, _drs("c1")))) == []


def test_k8s03_names_every_pair_of_three_workers() -> None:
    workers = [worker("w1", "h1"), worker("w2", "h2"), worker("w3", "h3")]
    ctx = with_report(KubernetesReport("k", "k.json", workers), _drs("c1"))
    pairs = ["vm-w1 and vm-w2", "vm-w1 and vm-w3", "vm-w2 and vm-w3"]
    message = "c1: vm-w1 and vm-w2, vm-w1 and vm-w3, vm-w2 and vm-w3"
    assert list(kubernetes.gpu_workers_kept_apart(ctx)) == [
        Verdict("k", False, message, {"not_kept_apart": {"c1": pairs}})
    ]


def test_k8s01_fails_when_one_host_carries_every_node_of_a_product() -> None:
    def row(name: str, host: str, product: str) -> NodeRow:
        return NodeRow(name, True, product, GPU, vm=name, host=host, power_state="poweredOn")

    spread = [row("a", "h0", "A100"), row("b", "h1", "A100"), row("c", "h2", "L4")]
    assert kubernetes.concentration(KubernetesReport("k", "k", spread))[0] == []
    # h0 carries two of four GPU nodes (not more than half) but both A100 nodes
    together = [
        row("a", "h0", "A100"),
        row("b", "h0", "A100"),
        row("c", "h1", "L4"),
        row("d", "h2", "L4"),
    ]
    assert kubernetes.concentration(KubernetesReport("k", "k", together))[0] == [
        "h0 carries all 2 A100 nodes"
    ]
