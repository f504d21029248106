"""The Kubernetes section of the reports: which ESXi host carries which node, and where
the GPU pods of each lost host go. Present only when Kubernetes clusters were given."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from gpuaudit.kubernetes.model import HostLoss, KubernetesReport, NodeRow, PodMove
from gpuaudit.report.tables import BOOL, TEXT, Table, Value, _table


def _counts(values: dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(values.items()))


def nodes_table(reports: list[KubernetesReport]) -> Table:
    Row = tuple[KubernetesReport, NodeRow]
    spec: list[tuple[str, str, Callable[[Row], Value]]] = [
        ("K8s Cluster", TEXT, lambda r: r[0].cluster),
        ("Node", TEXT, lambda r: r[1].node),
        ("GPU Node", BOOL, lambda r: r[1].gpu_node),
        ("GPU Product", TEXT, lambda r: r[1].product),
        ("Allocatable", TEXT, lambda r: _counts(r[1].allocatable)),
        ("VM", TEXT, lambda r: r[1].vm),
        ("Matched By", TEXT, lambda r: r[1].matched_by),
        ("ESXi Host", TEXT, lambda r: r[1].host),
        ("vSphere Cluster", TEXT, lambda r: r[1].vsphere_cluster),
        ("Power State", TEXT, lambda r: r[1].power_state),
    ]
    rows = [(k, n) for k in reports for n in k.nodes]
    return _table("k8s-nodes", "K8s Nodes", spec, rows)


def displaced_table(reports: list[KubernetesReport]) -> Table:
    Row = tuple[KubernetesReport, HostLoss, PodMove]
    spec: list[tuple[str, str, Callable[[Row], Value]]] = [
        ("K8s Cluster", TEXT, lambda r: r[0].cluster),
        ("Failed Host", TEXT, lambda r: r[1].host),
        ("Lost Nodes", TEXT, lambda r: ", ".join(r[1].lost_nodes)),
        ("Pod", TEXT, lambda r: r[2].pod),
        ("From Node", TEXT, lambda r: r[2].from_node),
        ("Requests", TEXT, lambda r: _counts(r[2].requests)),
        ("To Node", TEXT, lambda r: r[2].to_node),
        ("Pending", BOOL, lambda r: r[2].to_node is None),
        ("Reason", TEXT, lambda r: r[2].reason),
        ("Proven", BOOL, lambda r: r[1].proven),
    ]
    rows = [(k, loss, m) for k in reports for loss in k.losses for m in loss.moves]
    return _table("k8s-displaced", "K8s Displaced Pods", spec, rows)


@dataclass
class HostView:
    host: str
    gpu_nodes: list[str]
    other_nodes: list[str]
    loss: HostLoss | None = None


@dataclass
class ClusterView:
    """One Kubernetes cluster, as the HTML report shows it."""

    report: KubernetesReport
    hosts: list[HostView] = field(default_factory=list)
    not_located: list[str] = field(default_factory=list)


def cluster_views(reports: list[KubernetesReport]) -> list[ClusterView]:
    views = []
    for report in reports:
        view = ClusterView(report)
        losses = {loss.host: loss for loss in report.losses}
        hosts = sorted({str(n.host) for n in report.nodes if n.host is not None})
        for host in hosts:
            on = [n for n in report.nodes if n.host == host]
            view.hosts.append(
                HostView(
                    host,
                    [n.node for n in on if n.gpu_node],
                    [n.node for n in on if not n.gpu_node],
                    losses.get(host),
                )
            )
        view.not_located = [n.node for n in report.nodes if n.host is None]
        views.append(view)
    return views
