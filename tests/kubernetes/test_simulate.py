"""The Kubernetes analysis on small hand-built clusters: one behaviour per test."""

from __future__ import annotations

from gpuaudit.inventory import Host, Inventory, Vm
from gpuaudit.kubernetes.model import Cluster, Node, Pod, Requirement, Taint, Toleration
from gpuaudit.kubernetes.simulate import analyse, why_not
from gpuaudit.model.facts import Facts

GPU = "nvidia.com/gpu"


def uuid_of(i: int) -> str:
    return f"{i:08x}-1111-4222-8333-444444444444"


def estate(hosts: list[str], power: dict[int, str] | None = None) -> tuple[list[Node], Inventory]:
    """One node per host, each a VM with one free GPU."""
    nodes, vms = [], []
    for i, host in enumerate(hosts):
        nodes.append(Node(f"n{i}", provider_id=f"vsphere://{uuid_of(i)}", allocatable={GPU: 1}))
        vms.append(
            Vm(
                name=f"vm{i}",
                moref=f"vm-{i}",
                host=host,
                cluster="c",
                power_state=(power or {}).get(i, "poweredOn"),
                bios_uuid=uuid_of(i),
            )
        )
    hosts_ = [Host(name=h, moref=h, cluster="c") for h in sorted(set(hosts))]
    return nodes, Inventory(hosts=hosts_, vms=vms)


def moves(cluster: Cluster, inventory: Inventory) -> dict[str, dict[str, str | None]]:
    report = analyse(cluster, Facts(inventory))
    return {loss.host: {m.pod: m.to_node for m in loss.moves} for loss in report.losses}


def test_a_daemonset_pod_is_not_displaced_work() -> None:
    nodes, inventory = estate(["h0", "h1"])
    pods = [Pod("gpu-operator", "validator", node="n0", requests={GPU: 1}, daemonset=True)]
    assert moves(Cluster("k", "k", nodes, pods), inventory)["h0"] == {}


def test_a_succeeded_pod_is_not_displaced_and_holds_nothing() -> None:
    nodes, inventory = estate(["h0", "h1"])
    pods = [
        Pod("ns", "done", node="n1", phase="Succeeded", requests={GPU: 1}),
        Pod("ns", "app", node="n0", phase="Running", requests={GPU: 1}),
    ]
    assert moves(Cluster("k", "k", nodes, pods), inventory)["h0"] == {"ns/app": "n1"}


def test_a_pending_pod_bound_to_a_node_holds_its_gpu() -> None:
    nodes, inventory = estate(["h0", "h1"])
    pods = [
        Pod("ns", "starting", node="n1", phase="Pending", requests={GPU: 1}),
        Pod("ns", "app", node="n0", phase="Running", requests={GPU: 1}),
    ]
    assert moves(Cluster("k", "k", nodes, pods), inventory)["h0"] == {"ns/app": None}


def test_a_cordoned_node_and_a_node_whose_vm_is_off_take_nothing() -> None:
    nodes, inventory = estate(["h0", "h1", "h2"], power={2: "poweredOff"})
    nodes[1].unschedulable = True
    pods = [Pod("ns", "app", node="n0", requests={GPU: 1})]
    cluster = Cluster("k", "k", nodes, pods)
    assert moves(cluster, inventory)["h0"] == {"ns/app": None}
    assert analyse(cluster, Facts(inventory)).not_counted == ["n1", "n2"]


def test_every_node_on_the_lost_host_goes_with_it() -> None:
    nodes, inventory = estate(["h0", "h0", "h1"])
    pods = [Pod("ns", "a", node="n0", requests={GPU: 1})]
    assert moves(Cluster("k", "k", nodes, pods), inventory)["h0"] == {"ns/a": "n2"}


def test_the_mig_resource_a_pod_requests_must_be_free_on_the_node() -> None:
    mig = "nvidia.com/mig-1g.10gb"
    nodes, inventory = estate(["h0", "h1", "h2"])
    nodes[1].allocatable = {GPU: 1}
    nodes[2].allocatable = {mig: 2}
    pods = [Pod("ns", "a", node="n0", requests={mig: 2})]
    nodes[0].allocatable = {mig: 2}
    assert moves(Cluster("k", "k", nodes, pods), inventory)["h0"] == {"ns/a": "n2"}


def test_taints_and_tolerations() -> None:
    node = Node("n", taints=[Taint("gpu", "a100", "NoSchedule")])
    assert why_not(Pod("ns", "p"), node) == "taint gpu=a100:NoSchedule"
    for toleration in (
        Toleration(key="gpu", operator="Exists"),
        Toleration(operator="Exists"),
        Toleration(key="gpu", value="a100", effect="NoSchedule"),
    ):
        assert why_not(Pod("ns", "p", tolerations=[toleration]), node) is None
    wrong = Toleration(key="gpu", value="a100", effect="NoExecute")
    assert why_not(Pod("ns", "p", tolerations=[wrong]), node) is not None
    soft = Node("n", taints=[Taint("gpu", "a100", "PreferNoSchedule")])
    assert why_not(Pod("ns", "p"), soft) is None


def test_required_node_affinity_operators() -> None:
    node = Node("n", labels={"pool": "a", "gen": "4"})

    def allowed(*terms: list[Requirement]) -> bool:
        return why_not(Pod("ns", "p", affinity=list(terms)), node) is None

    assert allowed([Requirement("pool", "In", ("a", "b"))])
    assert not allowed([Requirement("pool", "NotIn", ("a",))])
    assert allowed([Requirement("zone", "NotIn", ("x",))])  # an absent label is not in
    assert allowed([Requirement("pool", "Exists")])
    assert allowed([Requirement("zone", "DoesNotExist")])
    assert allowed([Requirement("gen", "Gt", ("3",))])
    assert not allowed([Requirement("gen", "Lt", ("3",))])
    # terms are ORed, the expressions of one term ANDed; an empty term matches nothing
    assert allowed([Requirement("pool", "In", ("b",))], [Requirement("gen", "In", ("4",))])
    assert not allowed([Requirement("pool", "In", ("a",)), Requirement("gen", "In", ("5",))])
    assert not allowed([])
    assert allowed([Requirement("field:metadata.name", "In", ("n",))])
