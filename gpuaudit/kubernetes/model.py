"""Kubernetes clusters as plain data: what was read of their nodes and pods, and what the
audit concluded about them.

The reader (gpuaudit.kubernetes.read) fills the first half from ``kubectl get nodes,pods -o
json``; the analysis (gpuaudit.kubernetes.simulate) fills the second, which the reports render.
Only the GPU resources are kept: ``nvidia.com/gpu`` and the MIG resources
``nvidia.com/mig-*`` that the NVIDIA device plugin advertises.
"""

from __future__ import annotations

from dataclasses import dataclass, field

GPU_RESOURCE = "nvidia.com/gpu"
MIG_PREFIX = "nvidia.com/mig-"
PRODUCT_LABEL = "nvidia.com/gpu.product"
# Taint effects that keep a pod without a matching toleration off a node.
BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")
# Pods that hold their resources: a Pending pod already bound to a node holds them too.
ACTIVE_PHASES = ("Running", "Pending")
# A matchFields requirement's key, told apart from a label's (metadata.name selects the node).
FIELD_PREFIX = "field:"


def is_gpu_resource(name: str) -> bool:
    return name == GPU_RESOURCE or name.startswith(MIG_PREFIX)


@dataclass(frozen=True)
class Taint:
    key: str
    value: str = ""
    effect: str = ""


@dataclass(frozen=True)
class Toleration:
    key: str = ""  # empty with operator Exists: tolerates every taint
    operator: str = "Equal"  # Equal or Exists
    value: str = ""
    effect: str = ""  # empty: every effect


@dataclass(frozen=True)
class Requirement:
    """One match expression of a node selector term."""

    key: str
    operator: str  # In, NotIn, Exists, DoesNotExist, Gt, Lt
    values: tuple[str, ...] = ()


@dataclass
class Node:
    name: str
    provider_id: str = ""  # spec.providerID: vsphere://<BIOS UUID>
    system_uuid: str = ""  # status.nodeInfo.systemUUID
    labels: dict[str, str] = field(default_factory=dict)
    taints: list[Taint] = field(default_factory=list)
    allocatable: dict[str, int] = field(default_factory=dict)  # GPU resources only
    unschedulable: bool = False  # cordoned

    @property
    def gpu(self) -> bool:
        return any(n > 0 for n in self.allocatable.values()) or PRODUCT_LABEL in self.labels

    @property
    def product(self) -> str | None:
        return self.labels.get(PRODUCT_LABEL)


@dataclass
class Pod:
    namespace: str
    name: str
    node: str | None = None  # spec.nodeName; None while unscheduled
    phase: str = "Pending"
    requests: dict[str, int] = field(default_factory=dict)  # GPU resources, effective
    node_selector: dict[str, str] = field(default_factory=dict)
    # requiredDuringSchedulingIgnoredDuringExecution: any term, each all its expressions.
    # None: no required node affinity.
    affinity: list[list[Requirement]] | None = None
    tolerations: list[Toleration] = field(default_factory=list)
    daemonset: bool = False  # owned by a DaemonSet: runs on every node, never displaced

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def gpu(self) -> bool:
        return any(n > 0 for n in self.requests.values())

    @property
    def active(self) -> bool:
        return self.phase in ACTIVE_PHASES


@dataclass
class Cluster:
    """One Kubernetes cluster, as one file of ``kubectl get nodes,pods`` gives it."""

    name: str
    source: str  # the file it was read from
    nodes: list[Node] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)


# --- what the audit concluded -------------------------------------------------------------


@dataclass
class NodeRow:
    """A node and the VM behind it."""

    node: str
    gpu_node: bool
    product: str | None = None
    allocatable: dict[str, int] = field(default_factory=dict)
    vm: str | None = None  # None: no VM of the inventory has the node's UUID
    matched_by: str | None = None  # providerID, systemUUID or systemUUID (byte-swapped)
    host: str | None = None  # the ESXi host running the VM
    vsphere_cluster: str | None = None
    power_state: str | None = None


@dataclass
class PodMove:
    """A GPU pod of a lost node: where the scheduler could put it, or why it stays pending."""

    pod: str  # namespace/name
    from_node: str
    requests: dict[str, int] = field(default_factory=dict)
    to_node: str | None = None  # None: stays pending
    reason: str | None = None  # why it stays pending


@dataclass
class HostLoss:
    """The loss of one ESXi host, as the Kubernetes cluster sees it."""

    host: str
    lost_nodes: list[str] = field(default_factory=list)
    moves: list[PodMove] = field(default_factory=list)
    proven: bool = True  # False: the exact search hit its bound; pending means "not proven"

    @property
    def pending(self) -> list[PodMove]:
        return [m for m in self.moves if m.to_node is None]


@dataclass
class KubernetesReport:
    """One Kubernetes cluster's section of the report."""

    cluster: str
    source: str
    nodes: list[NodeRow] = field(default_factory=list)
    losses: list[HostLoss] = field(default_factory=list)
    # GPU VMs beside the cluster's nodes (same vSphere clusters) that are no node of it
    unmatched_gpu_vms: list[str] = field(default_factory=list)
    # Nodes that cannot take displaced pods: no VM found, VM powered off, or cordoned
    not_counted: list[str] = field(default_factory=list)

    @property
    def holds(self) -> bool:
        """K8S-02: every host loss leaves no GPU pod pending."""
        return all(not loss.pending for loss in self.losses)
