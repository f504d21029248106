"""Kubernetes rules: can Kubernetes restart the GPU work of a lost ESXi host?

Designs A and C rely on it: vSphere HA cannot restart a passthrough GPU VM, so the
GPU pods of a lost host's nodes must find room on the nodes that remain. The rules
read the Kubernetes clusters given with ``scan --kubernetes`` (gpuaudit.kubernetes.simulate:
which VM each node is, and each host loss); without one, they give no verdict.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from gpuaudit.kubernetes.model import HostLoss, KubernetesReport
from gpuaudit.rules import sources
from gpuaudit.rules.registry import Context, Verdict, rule

K8S_REFERENCES = (
    sources.K8S_SCHEDULING_GPUS,
    sources.K8S_ASSIGN_POD_NODE,
    sources.K8S_TAINTS,
    sources.NVIDIA_GPU_OPERATOR_MIG,
)


def concentration(report: KubernetesReport) -> tuple[list[str], dict[str, Any]]:
    """K8S-01's problems (one line each) and its evidence."""
    located = [
        r
        for r in report.nodes
        if r.gpu_node and r.host is not None and r.power_state == "poweredOn"
    ]
    by_host: dict[str, list[str]] = {}
    for row in located:
        by_host.setdefault(str(row.host), []).append(row.node)
    problems = []
    for host, nodes in sorted(by_host.items()):
        if len(nodes) * 2 > len(located):
            problems.append(f"{host} carries {len(nodes)} of the {len(located)} GPU nodes")
    products: dict[str, list[str]] = {}
    for row in located:
        if row.product:
            products.setdefault(row.product, []).append(str(row.host))
    for product, hosts in sorted(products.items()):
        if len(hosts) > 1 and len(set(hosts)) == 1:
            problems.append(f"{hosts[0]} carries all {len(hosts)} {product} nodes")
    evidence = {
        "gpu_nodes_by_host": {h: sorted(n) for h, n in sorted(by_host.items())},
        # no VM found, or the VM is powered off (K8S-04)
        "gpu_nodes_not_counted": sorted(
            r.node for r in report.nodes if r.gpu_node and r not in located
        ),
    }
    return problems, evidence


def gpu_nodes_spread(ctx: Context) -> Iterator[Verdict]:
    for report in ctx.kubernetes:
        if not any(r.gpu_node for r in report.nodes):
            continue
        problems, evidence = concentration(report)
        spread = len(evidence["gpu_nodes_by_host"])
        message = (
            "; ".join(problems)
            if problems
            else f"the GPU nodes are spread over {spread} ESXi hosts"
        )
        yield Verdict(report.cluster, not problems, message, evidence)


rule(
    id="K8S-01",
    title="A Kubernetes cluster's GPU nodes are concentrated on one ESXi host",
    category="ha",
    severity="high",
    object_kind="kubernetes-cluster",
    rationale="""Designs A and C let Kubernetes, not vSphere HA, restart GPU work: a passthrough
        GPU VM cannot be restarted on another host. That works only if the GPU nodes are spread
        over ESXi hosts. When one host runs more than half of a Kubernetes cluster's GPU nodes,
        or every node of one GPU product (the nvidia.com/gpu.product label of NVIDIA's GPU
        Feature Discovery), the loss of that host takes most of the GPU capacity, or all of a
        product, with it.""",
    remediation="""Spread the GPU worker VMs over ESXi hosts (a DRS VM-VM anti-affinity rule
        keeps them apart), so that no host carries more than half of them or every node of one
        GPU product.""",
    references=(sources.NVIDIA_GPU_OPERATOR_MIG, *K8S_REFERENCES[:2]),
)(gpu_nodes_spread)


def _loss_line(loss: HostLoss) -> str:
    pending = loss.pending
    names = ", ".join(m.pod for m in pending)
    proof = "" if loss.proven else " (not proven: the search hit its bound)"
    pods = "GPU pod" if len(pending) == 1 else "GPU pods"
    return f"the loss of {loss.host} leaves {len(pending)} {pods} pending: {names}{proof}"


def n_plus_one(report: KubernetesReport) -> tuple[bool, str]:
    """Whether K8S-02 holds for the cluster, and why, in one line."""
    failing = [loss for loss in report.losses if loss.pending]
    if failing:
        return False, "; ".join(_loss_line(loss) for loss in failing)
    moved = sum(len(loss.moves) for loss in report.losses)
    return True, (
        f"after the loss of any one of {len(report.losses)} ESXi hosts, the remaining "
        f"nodes take the lost nodes' GPU pods ({moved} displaced in all)"
    )


def reschedulable(ctx: Context) -> Iterator[Verdict]:
    for report in ctx.kubernetes:
        if not report.losses:
            continue
        holds, message = n_plus_one(report)
        evidence = {
            "losses": [
                {
                    "host": loss.host,
                    "lost_nodes": loss.lost_nodes,
                    "proven": loss.proven,
                    "moves": [
                        {"pod": m.pod, "to": m.to_node, "reason": m.reason} for m in loss.moves
                    ],
                }
                for loss in report.losses
            ],
            "nodes_not_counted": report.not_counted,
        }
        yield Verdict(report.cluster, holds, message, evidence)


rule(
    id="K8S-02",
    title="After the loss of one ESXi host, Kubernetes cannot reschedule every GPU pod",
    category="ha",
    severity="high",
    object_kind="kubernetes-cluster",
    rationale="""The Kubernetes N+1: when an ESXi host fails, its nodes go with it, and the
        scheduler must place their GPU pods on the nodes that remain. A pod goes only where
        the node has the GPU resources it requests left (nvidia.com/gpu, or a MIG resource
        nvidia.com/mig-*), where the node's labels satisfy its nodeSelector and required node
        affinity, and where it tolerates the node's NoSchedule and NoExecute taints. gpuaudit
        removes each host in turn and searches, exactly, for the placement of the most
        displaced pods; a pod it cannot place would stay Pending. DaemonSet pods are not
        displaced work: their DaemonSet runs them on every node.""",
    remediation="""Keep spare GPU capacity on other hosts' nodes for the largest host's GPU pods
        (the buffer node of design C), with the labels and tolerations the pods need; or relax
        the pods' selectors. The finding lists the pods that stay pending and why.""",
    references=K8S_REFERENCES,
)(reschedulable)


def node_vm_found(ctx: Context) -> Iterator[Verdict]:
    for report in ctx.kubernetes:
        for row in report.nodes:
            where = f"{report.cluster}/{row.node}"
            evidence = {
                "kubernetes_cluster": report.cluster,
                "vm": row.vm,
                "matched_by": row.matched_by,
                "power_state": row.power_state,
            }
            if row.vm is None:
                message = "no VM of the inventory has the node's providerID or systemUUID"
                passed = False
            elif row.power_state != "poweredOn":
                message = f"the node's VM {row.vm} is {row.power_state}"
                passed = False
            else:
                message = f"runs as VM {row.vm} on {row.host} (matched by {row.matched_by})"
                passed = True
            yield Verdict(
                where,
                passed,
                message,
                evidence,
                cluster=row.vsphere_cluster,
                host=row.host,
                severity=None if row.gpu_node else "low",
            )


rule(
    id="K8S-04",
    title="A Kubernetes node's VM is not in the audited vCenter, or is powered off",
    category="data",
    severity="medium",
    object_kind="kubernetes-node",
    rationale="""Each node is matched to its VM by the VM's BIOS UUID: the node's providerID
        (vsphere://<uuid>) or its systemUUID, which some releases report with the first three
        groups byte-swapped. A node with no VM in the inventory runs elsewhere (another
        vCenter, or bare metal), so the audit cannot say which host it shares with others; a
        node whose VM is powered off is capacity that is not there. Either way the Kubernetes
        rules cannot count on it.""",
    remediation="""Audit the vCenter that runs the node's VM as well, power the VM on, or remove
        the stale node from the cluster (kubectl delete node).""",
    references=(sources.K8S_ASSIGN_POD_NODE, sources.HA_HOW_IT_WORKS),
)(node_vm_found)


def not_kept_apart(ctx: Context, report: KubernetesReport) -> dict[str, list[str]]:
    """vSphere cluster -> what keeps its GPU worker VMs of ``report`` from being kept
    apart: DRS off, or each pair that no enabled VM-VM anti-affinity rule holds."""
    workers: dict[str, list[str]] = {}
    for row in report.nodes:
        if row.gpu_node and row.vm and row.vsphere_cluster and row.power_state == "poweredOn":
            workers.setdefault(row.vsphere_cluster, []).append(row.vm)
    problems: dict[str, list[str]] = {}
    for name, vms in sorted(workers.items()):
        if len(vms) < 2:
            continue
        cluster = ctx.facts.clusters.get(name)
        if cluster is None or not cluster.drs_enabled:
            problems[name] = ["DRS is off, so no VM-VM rule keeps them apart"]
            continue
        apart = [set(r.vms) for r in cluster.vm_vm_rules if r.enabled and not r.affinity]
        pairs = [
            f"{a} and {b}"
            for a, b in itertools.combinations(sorted(vms), 2)
            if not any(a in rule and b in rule for rule in apart)
        ]
        if pairs:
            problems[name] = pairs
    return problems


def gpu_workers_kept_apart(ctx: Context) -> Iterator[Verdict]:
    for report in ctx.kubernetes:
        located = {
            r.vsphere_cluster
            for r in report.nodes
            if r.gpu_node and r.vm and r.vsphere_cluster and r.power_state == "poweredOn"
        }
        if not located:
            continue
        problems = not_kept_apart(ctx, report)
        message = (
            "; ".join(f"{c}: {', '.join(p)}" for c, p in problems.items())
            if problems
            else "an enabled DRS anti-affinity rule keeps each pair of GPU worker VMs apart"
        )
        yield Verdict(report.cluster, not problems, message, {"not_kept_apart": problems})


rule(
    id="K8S-03",
    title="A Kubernetes cluster's GPU worker VMs have no DRS anti-affinity rule keeping them apart",
    category="ha",
    severity="medium",
    object_kind="kubernetes-cluster",
    rationale="""DRS places and moves VMs for load, and knows nothing of Kubernetes: without a
        VM-VM anti-affinity rule it may put two GPU worker VMs of one Kubernetes cluster on one
        ESXi host, whose loss then takes both (K8S-01 and K8S-02 judge where they run now, not
        where DRS may move them). An enabled anti-affinity rule holding each pair of the
        cluster's GPU worker VMs, in a cluster where DRS is on, keeps them on separate hosts.""",
    remediation="""Create a DRS VM-VM anti-affinity rule ("Separate Virtual Machines") holding the
        GPU worker VMs of each Kubernetes cluster, and keep DRS enabled.""",
    references=(sources.K8S_ASSIGN_POD_NODE, sources.HA_HOW_IT_WORKS),
)(gpu_workers_kept_apart)
