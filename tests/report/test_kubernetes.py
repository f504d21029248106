"""The Kubernetes section of the reports, its tables and cluster views whole,
written out by hand.

Kubernetes cluster k1 has GPU nodes gpu-1 (on esx-02) and gpu-2 (on esx-01), CPU
nodes cpu-1 (esx-02) and cpu-2 (esx-03), and GPU node ghost, whose VM was not
found. The loss of esx-02 leaves ml/train pending and moves ml/infer to gpu-2; the
search for it hit its bound. Cluster k2 has one node, n1 on esx-09, whose pod stays
pending when esx-09 is lost.
"""

from __future__ import annotations

from gpuaudit.kubernetes.model import HostLoss, KubernetesReport, NodeRow, PodMove
from gpuaudit.report.kubernetes import (
    ClusterView,
    HostView,
    cluster_views,
    displaced_table,
    nodes_table,
)
from gpuaudit.report.tables import BOOL, TEXT, Column

GPU = "nvidia.com/gpu"


def _reports() -> list[KubernetesReport]:
    gpu_1 = NodeRow(
        "gpu-1",
        True,
        "NVIDIA-L4",
        {GPU: 2, "cpu": 8},
        "vm-g1",
        "providerID",
        "esx-02",
        "gpu-a",
        "poweredOn",
    )
    cpu_1 = NodeRow(
        "cpu-1", False, None, {"cpu": 4}, "vm-c1", "systemUUID", "esx-02", "gpu-a", "poweredOn"
    )
    gpu_2 = NodeRow(
        "gpu-2",
        True,
        "NVIDIA-L4",
        {GPU: 1},
        "vm-g2",
        "systemUUID (byte-swapped)",
        "esx-01",
        "gpu-a",
        "poweredOff",
    )
    cpu_2 = NodeRow("cpu-2", False, host="esx-03")
    ghost = NodeRow("ghost", True)
    esx_02 = HostLoss(
        "esx-02",
        ["gpu-1", "cpu-1"],
        [
            PodMove(
                "ml/train", "gpu-1", {GPU: 2, "cpu": 1}, None, "no node has 2 nvidia.com/gpu free"
            ),
            PodMove("ml/infer", "gpu-1", {GPU: 1}, "gpu-2"),
        ],
        proven=False,
    )
    k1 = KubernetesReport(
        "k1",
        "kubeconfig",
        [gpu_1, cpu_1, gpu_2, cpu_2, ghost],
        [esx_02, HostLoss("esx-01", ["gpu-2"])],
    )
    n1 = NodeRow(
        "n1", True, "NVIDIA-A10", {GPU: 1}, "vm-n1", "providerID", "esx-09", "b", "poweredOn"
    )
    k2 = KubernetesReport(
        "k2",
        "kubeconfig-2",
        [n1],
        [HostLoss("esx-09", ["n1"], [PodMove("a/b", "n1", {GPU: 1}, None, "no GPU node left")])],
    )
    return [k1, k2]


def test_the_nodes_table() -> None:
    table = nodes_table(_reports())
    assert (table.key, table.title) == ("k8s-nodes", "K8s Nodes")
    assert table.columns == [
        Column("K8s Cluster", TEXT),
        Column("Node", TEXT),
        Column("GPU Node", BOOL),
        Column("GPU Product", TEXT),
        Column("Allocatable", TEXT),
        Column("VM", TEXT),
        Column("Matched By", TEXT),
        Column("ESXi Host", TEXT),
        Column("vSphere Cluster", TEXT),
        Column("Power State", TEXT),
    ]
    assert table.rows == [
        [
            "k1",
            "gpu-1",
            True,
            "NVIDIA-L4",
            "cpu=8, nvidia.com/gpu=2",
            "vm-g1",
            "providerID",
            "esx-02",
            "gpu-a",
            "poweredOn",
        ],
        [
            "k1",
            "cpu-1",
            False,
            None,
            "cpu=4",
            "vm-c1",
            "systemUUID",
            "esx-02",
            "gpu-a",
            "poweredOn",
        ],
        [
            "k1",
            "gpu-2",
            True,
            "NVIDIA-L4",
            "nvidia.com/gpu=1",
            "vm-g2",
            "systemUUID (byte-swapped)",
            "esx-01",
            "gpu-a",
            "poweredOff",
        ],
        ["k1", "cpu-2", False, None, "", None, None, "esx-03", None, None],
        ["k1", "ghost", True, None, "", None, None, None, None, None],
        [
            "k2",
            "n1",
            True,
            "NVIDIA-A10",
            "nvidia.com/gpu=1",
            "vm-n1",
            "providerID",
            "esx-09",
            "b",
            "poweredOn",
        ],
    ]


def test_the_displaced_pods_table() -> None:
    table = displaced_table(_reports())
    assert (table.key, table.title) == ("k8s-displaced", "K8s Displaced Pods")
    assert table.columns == [
        Column("K8s Cluster", TEXT),
        Column("Failed Host", TEXT),
        Column("Lost Nodes", TEXT),
        Column("Pod", TEXT),
        Column("From Node", TEXT),
        Column("Requests", TEXT),
        Column("To Node", TEXT),
        Column("Pending", BOOL),
        Column("Reason", TEXT),
        Column("Proven", BOOL),
    ]
    # The loss of esx-01 moves no pod: no row.
    assert table.rows == [
        [
            "k1",
            "esx-02",
            "gpu-1, cpu-1",
            "ml/train",
            "gpu-1",
            "cpu=1, nvidia.com/gpu=2",
            None,
            True,
            "no node has 2 nvidia.com/gpu free",
            False,
        ],
        [
            "k1",
            "esx-02",
            "gpu-1, cpu-1",
            "ml/infer",
            "gpu-1",
            "nvidia.com/gpu=1",
            "gpu-2",
            False,
            None,
            False,
        ],
        [
            "k2",
            "esx-09",
            "n1",
            "a/b",
            "n1",
            "nvidia.com/gpu=1",
            None,
            True,
            "no GPU node left",
            True,
        ],
    ]


def test_the_cluster_views() -> None:
    k1, k2 = _reports()
    assert cluster_views([k1, k2]) == [
        ClusterView(
            k1,
            [
                HostView("esx-01", ["gpu-2"], [], k1.losses[1]),
                HostView("esx-02", ["gpu-1"], ["cpu-1"], k1.losses[0]),
                HostView("esx-03", [], ["cpu-2"], None),
            ],
            ["ghost"],
        ),
        ClusterView(k2, [HostView("esx-09", ["n1"], [], k2.losses[0])], []),
    ]
