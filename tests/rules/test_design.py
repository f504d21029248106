"""DS-02's decision flow (rules/design.py): each path of the flow in docs/policy.md, and
each departure at its boundary, written out by hand."""

from __future__ import annotations

import pytest

from gpuaudit.model.policy import Intent, Policy
from gpuaudit.rules import design
from gpuaudit.rules.design import Design
from gpuaudit.rules.registry import Outcome
from tests.support.builders import Estate, context, healthy, passthrough_estate


@pytest.mark.parametrize(
    ("intent", "recommended", "steps"),
    [
        (Intent(stateless=False), "dedicated GPU + SAN (vGPU optional)", ["stateless: no"]),
        (
            Intent(max_restart_minutes=0.5),
            "active-active application with traffic routing, not VMware HA",
            ["stateless: yes", "zero or near-zero downtime: yes"],
        ),
        (
            Intent(max_restart_minutes=1, vm_ha_mandated=True, gpu_sharing_required=True),
            "vGPU + SAN + HBA/iSCSI",
            [
                "stateless: yes",
                "zero or near-zero downtime: no",
                "VM-level HA mandated: yes",
                "GPU sharing required: yes",
            ],
        ),
        (
            Intent(vm_ha_mandated=True),
            "PCI passthrough + SAN",
            [
                "stateless: yes",
                "zero or near-zero downtime: no",
                "VM-level HA mandated: yes",
                "GPU sharing required: no",
            ],
        ),
        (
            Intent(gpu_sharing_required=True, budget_constrained=True),
            "re-evaluate the workload (sharing on a constrained budget)",
            [
                "stateless: yes",
                "zero or near-zero downtime: no",
                "VM-level HA mandated: no",
                "GPU sharing required: yes",
                "budget constrained: yes",
            ],
        ),
        (
            Intent(gpu_sharing_required=True),
            "vGPU + SAN",
            [
                "stateless: yes",
                "zero or near-zero downtime: no",
                "VM-level HA mandated: no",
                "GPU sharing required: yes",
                "budget constrained: no",
            ],
        ),
        (
            Intent(max_restart_minutes=5),
            "PCI passthrough, independent GPU nodes, Kubernetes HA, N+1, no SAN",
            [
                "stateless: yes",
                "zero or near-zero downtime: no",
                "VM-level HA mandated: no",
                "GPU sharing required: no",
                "restart of 2-5 minutes acceptable: yes",
            ],
        ),
        (
            Intent(max_restart_minutes=4.9),
            "PCI passthrough plus a buffer node (capacity-based HA)",
            [
                "stateless: yes",
                "zero or near-zero downtime: no",
                "VM-level HA mandated: no",
                "GPU sharing required: no",
                "restart of 2-5 minutes acceptable: no",
            ],
        ),
    ],
)
def test_every_path_of_the_decision_flow(
    intent: Intent, recommended: str, steps: list[str]
) -> None:
    assert design.recommendation(intent) == (recommended, steps)


def _design(**fields: object) -> Design:
    return Design("other", "", **fields)  # type: ignore[arg-type]


def test_a_stateful_workload_needs_shared_storage_and_ha() -> None:
    assert design.departures(_design(storage="local"), Intent(stateless=False)) == [
        ("high", "a stateful GPU workload keeps files on local or unshared storage"),
        ("medium", "a stateful GPU workload runs with vSphere HA off"),
    ]
    shared = _design(storage="shared", ha_enabled=True)
    assert design.departures(shared, Intent(stateless=False)) == []


def test_near_zero_downtime_needs_an_active_active_application() -> None:
    intent = Intent(max_restart_minutes=0.5)
    assert design.departures(_design(ha_enabled=True), intent) == [
        (
            "medium",
            "near-zero downtime is required but the design relies on VMware HA restarts: GPU "
            "live migration is not the answer, an active-active application is",
        )
    ]
    assert design.departures(_design(), intent)[0][1].startswith(
        "near-zero downtime is required but the design restarts workloads: "
    )
    assert design.departures(_design(), Intent(max_restart_minutes=0.5, active_active=True)) == []
    one_minute = design.departures(_design(buffer_hosts=["h3"]), Intent(max_restart_minutes=1))
    assert one_minute == []


def test_a_vm_level_ha_mandate() -> None:
    d = _design(storage="mixed", kinds=["passthrough"])
    assert design.departures(d, Intent(vm_ha_mandated=True)) == [
        ("high", "VM-level HA is mandated but GPU VM files are not on shared storage"),
        ("high", "VM-level HA is mandated but vSphere HA is off"),
        ("medium", "VM-level HA is mandated but fixed DirectPath VMs cannot be restarted"),
    ]


def test_gpu_sharing_and_budget() -> None:
    passthrough = _design(kinds=["passthrough"], storage="shared", buffer_hosts=["h3"])
    assert design.departures(passthrough, Intent(gpu_sharing_required=True)) == [
        ("medium", "GPU sharing is required but GPUs are passed through whole")
    ]
    local_vgpu = _design(kinds=["vgpu"], storage="local", buffer_hosts=["h3"])
    assert design.departures(local_vgpu, Intent(gpu_sharing_required=True)) == [
        ("low", "vGPU without shared storage: the flow recommends SAN with vGPU")
    ]
    tight = Intent(gpu_sharing_required=True, budget_constrained=True)
    assert design.departures(_design(kinds=["vgpu"], storage="shared"), tight) == [
        ("low", "vGPU on a constrained budget: the flow says re-evaluate the workload")
    ]
    san_vgpu = _design(kinds=["vgpu"], storage="shared", san=True)
    assert design.departures(san_vgpu, Intent(budget_constrained=True)) == [
        ("low", "over-engineered: vGPU + SAN where no GPU sharing is required on a tight budget")
    ]
    san_only = _design(kinds=["passthrough"], storage="shared", san=True)
    assert design.departures(san_only, Intent(budget_constrained=True)) == [
        ("low", "over-engineered: SAN where no GPU sharing is required on a tight budget")
    ]
    mandated = Intent(budget_constrained=True, vm_ha_mandated=True)
    kept = _design(kinds=["passthrough"], storage="shared", san=True, ha_enabled=True)
    assert design.departures(kept, mandated) == [
        ("medium", "VM-level HA is mandated but fixed DirectPath VMs cannot be restarted")
    ]


def test_a_short_restart_needs_a_buffer_node() -> None:
    assert design.departures(_design(storage="local"), Intent(max_restart_minutes=2.5)) == [
        (
            "medium",
            "restarts must finish within 2.5 minutes but the cluster has no buffer node for "
            "capacity-based HA",
        )
    ]
    assert design.departures(_design(storage="local"), Intent(max_restart_minutes=5)) == []


def test_without_kubernetes_input_its_restarts_are_unchecked() -> None:
    e = passthrough_estate()
    assert design.kubernetes_restarts(context(e.inv), "pt") == (
        "that Kubernetes reschedules the GPU pods of a lost host is unchecked "
        "(no Kubernetes cluster given: scan --kubernetes)",
        {"checked": False},
    )


def test_kubernetes_restarts_judges_each_kubernetes_cluster_of_the_gpu_vms() -> None:
    from gpuaudit.kubernetes.model import KubernetesReport, NodeRow

    def node(vm: str) -> NodeRow:
        return NodeRow(f"node-{vm}", True, "NVIDIA-L4", {"nvidia.com/gpu": 1}, vm=vm)

    ctx = context(passthrough_estate().inv)  # cluster pt: GPU VMs pv1 and pv2
    elsewhere = KubernetesReport("other", "other.json", [node("not-here")])
    ctx.kubernetes = [elsewhere]
    assert design.kubernetes_restarts(ctx, "pt") == (
        "its GPU VMs are nodes of none of the Kubernetes clusters given: that Kubernetes "
        "reschedules their work is unchecked",
        {"checked": False},
    )
    # No host loss is listed for either cluster, so K8S-02 holds for both; the one
    # whose nodes are not pt's GPU VMs is left out, wherever it comes in the list.
    ctx.kubernetes = [
        elsewhere,
        KubernetesReport("k1", "k1.json", [node("pv1")]),
        KubernetesReport("k2", "k2.json", [node("pv2")]),
    ]
    assert design.kubernetes_restarts(ctx, "pt") == (
        "Kubernetes cluster k1: K8S-02 holds; Kubernetes cluster k2: K8S-02 holds",
        {"checked": True, "k8s_02_holds": {"k1": True, "k2": True}},
    )


def test_ds01_says_for_design_c_whether_kubernetes_restarts_were_checked() -> None:
    e = passthrough_estate(buffer=True)  # design C: passthrough with a buffer node
    cluster = e.inv.clusters[0]
    outcome = design.scenario(context(e.inv), cluster)
    assert design.observe(context(e.inv).facts, "pt").scenario == "C"
    assert outcome.message.endswith(
        "; that Kubernetes reschedules the GPU pods of a lost host is unchecked "
        "(no Kubernetes cluster given: scan --kubernetes)"
    )
    assert outcome.evidence["kubernetes"] == {"checked": False}


HEALTHY_OBSERVED = {
    "scenario": "B",
    "gpu_vms": 3,
    "gpu_kinds": ["vgpu"],
    "storage": "shared",
    "transports": ["fc"],
    "san": True,
    "ha_enabled": True,
    "gpu_hosts": ["h1", "h2", "h3"],
    "buffer_hosts": [],
    "spare_gpu_hosts": [],
}


def test_ds02_a_design_consistent_with_the_default_path_passes_with_its_whole_verdict() -> None:
    e = healthy()  # the default intent: stateless, a 5-minute restart acceptable
    assert design.decision_flow(context(e.inv), e.inv.clusters[0]) == Outcome(
        True,
        "consistent with the decision flow "
        "(PCI passthrough, independent GPU nodes, Kubernetes HA, N+1, no SAN)",
        {
            "intent": {
                "stateless": True,
                "max_restart_minutes": 5.0,
                "vm_ha_mandated": False,
                "gpu_sharing_required": False,
                "budget_constrained": False,
                "active_active": False,
            },
            "flow": [
                "stateless: yes",
                "zero or near-zero downtime: no",
                "VM-level HA mandated: no",
                "GPU sharing required: no",
                "restart of 2-5 minutes acceptable: yes",
            ],
            "recommended": "PCI passthrough, independent GPU nodes, Kubernetes HA, N+1, no SAN",
            "observed": HEALTHY_OBSERVED,
            "departures": [],
        },
    )


def test_ds02_fails_at_the_severity_of_its_worst_departure_with_its_whole_verdict() -> None:
    e = healthy()  # vGPU on an FC SAN, every host running a GPU VM: no buffer node
    policy = Policy(intent=Intent(max_restart_minutes=2.5, budget_constrained=True))
    over = "over-engineered: vGPU + SAN where no GPU sharing is required on a tight budget"
    short = (
        "restarts must finish within 2.5 minutes but the cluster has no buffer node for "
        "capacity-based HA"
    )
    # "low" sorts before "medium" by name: only the severity ranking makes medium the worst.
    assert design.decision_flow(context(e.inv, policy), e.inv.clusters[0]) == Outcome(
        False,
        f"{over}; {short} (the flow recommends: "
        "PCI passthrough plus a buffer node (capacity-based HA))",
        {
            "intent": {
                "stateless": True,
                "max_restart_minutes": 2.5,
                "vm_ha_mandated": False,
                "gpu_sharing_required": False,
                "budget_constrained": True,
                "active_active": False,
            },
            "flow": [
                "stateless: yes",
                "zero or near-zero downtime: no",
                "VM-level HA mandated: no",
                "GPU sharing required: no",
                "restart of 2-5 minutes acceptable: no",
            ],
            "recommended": "PCI passthrough plus a buffer node (capacity-based HA)",
            "observed": HEALTHY_OBSERVED,
            "departures": [
                {"severity": "low", "text": over},
                {"severity": "medium", "text": short},
            ],
        },
        severity="medium",
    )


UNCHECKED = (
    "that Kubernetes reschedules the GPU pods of a lost host is unchecked "
    "(no Kubernetes cluster given: scan --kubernetes)"
)


def test_ds01_design_b_with_its_whole_verdict() -> None:
    e = healthy()
    assert design.scenario(context(e.inv), e.inv.clusters[0]) == Outcome(
        True, "Scenario B: vGPU on shared storage (VMware HA with SAN)", HEALTHY_OBSERVED
    )


def test_ds01_a_spare_gpu_does_not_make_vgpu_design_c() -> None:
    e = healthy()
    h4 = e.host("h4", "c1")
    e.gpu(h4)  # in vGPU mode, running nothing: a spare
    outcome = design.scenario(context(e.inv), e.inv.clusters[0])
    assert (outcome.passed, outcome.message) == (
        True,
        "Scenario B: vGPU on shared storage (VMware HA with SAN)",
    )
    assert outcome.evidence["buffer_hosts"] == ["h4"]
    assert outcome.evidence["spare_gpu_hosts"] == ["h4"]


def test_ds01_design_a_with_its_whole_verdict() -> None:
    e = passthrough_estate()  # p1, p2: a passthrough L4 each, on local disks; HA off
    assert design.scenario(context(e.inv), e.inv.clusters[0]) == Outcome(
        True,
        f"Scenario A: dedicated passthrough GPU nodes on local disks; {UNCHECKED}",
        {
            "scenario": "A",
            "gpu_vms": 2,
            "gpu_kinds": ["passthrough"],
            "storage": "local",
            "transports": ["local"],
            "san": False,
            "ha_enabled": False,
            "gpu_hosts": ["p1", "p2"],
            "buffer_hosts": [],
            "spare_gpu_hosts": [],
            "kubernetes": {"checked": False},
        },
    )


def test_ds01_design_c_with_its_whole_verdict() -> None:
    e = passthrough_estate(buffer=True)  # p3: a passthrough L4 and no VM
    assert design.scenario(context(e.inv), e.inv.clusters[0]) == Outcome(
        True,
        f"Scenario C: passthrough GPU nodes plus a buffer node with a spare GPU; {UNCHECKED}",
        {
            "scenario": "C",
            "gpu_vms": 2,
            "gpu_kinds": ["passthrough"],
            "storage": "local",
            "transports": ["local"],
            "san": False,
            "ha_enabled": False,
            "gpu_hosts": ["p1", "p2"],
            "buffer_hosts": ["p3"],
            "spare_gpu_hosts": ["p3"],
            "kubernetes": {"checked": False},
        },
    )


def test_ds01_vgpu_and_passthrough_on_partly_shared_storage_is_no_design() -> None:
    e = Estate()
    e.cluster("c1")
    h1, h2, h3 = e.host("h1", "c1"), e.host("h2", "c1"), e.host("h3", "c1")
    e.gpu(h1)
    g2 = e.gpu(h2, mode="passthrough")
    e.datastore("san1", [h1, h2])
    e.datastore("local-h2", [h2], transport="local")
    e.vm("v1", h1, ["san1"], vgpu="grid_l4-8q")
    e.vm("p1", h2, ["local-h2", "gone"], passthrough=g2)  # "gone": a datastore not read
    e.vm("off1", h3, ["san1"], passthrough=g2, power="poweredOff")
    assert design.scenario(context(e.inv), e.inv.clusters[0]) == Outcome(
        False,
        "vGPU and passthrough on partly shared storage: none of the designs A, B, C",
        {
            "scenario": "other",
            "gpu_vms": 3,
            "gpu_kinds": ["passthrough", "vgpu"],
            "storage": "mixed",
            "transports": ["fc", "local"],
            "san": True,
            "ha_enabled": True,
            "gpu_hosts": ["h1", "h2"],
            "buffer_hosts": ["h3"],  # its only GPU VM is powered off
            "spare_gpu_hosts": [],  # and it has no GPU
        },
    )


def test_ds01_passthrough_on_shared_storage_without_a_spare_is_no_design() -> None:
    e = Estate()
    e.cluster("c1")
    h1, h2 = e.host("h1", "c1"), e.host("h2", "c1")
    g1, g2 = e.gpu(h1, mode="passthrough"), e.gpu(h2, mode="passthrough")
    e.datastore("nfs1", [h1, h2], transport="nfs")
    e.vm("p1", h1, ["nfs1"], passthrough=g1)
    e.vm("p2", h2, ["nfs1"], passthrough=g2)
    assert design.scenario(context(e.inv), e.inv.clusters[0]) == Outcome(
        False,
        "passthrough on shared storage: none of the designs A, B, C",
        {
            "scenario": "other",
            "gpu_vms": 2,
            "gpu_kinds": ["passthrough"],
            "storage": "shared",
            "transports": ["nfs"],
            "san": False,
            "ha_enabled": True,
            "gpu_hosts": ["h1", "h2"],
            "buffer_hosts": [],
            "spare_gpu_hosts": [],
        },
    )


def test_the_designs_of_vgpu_without_shared_storage() -> None:
    assert design._classify(_design(kinds=["vgpu"], storage="none")) == (
        "other",
        "vGPU on no storage: none of the designs A, B, C",
    )
    assert design._classify(_design(kinds=["vgpu"], storage="local")) == (
        "other",
        "vGPU on local storage: none of the designs A, B, C",
    )
    assert design._classify(_design(kinds=["vgpu"], storage="mixed")) == (
        "other",
        "vGPU on partly shared storage: none of the designs A, B, C",
    )
    assert design._classify(_design(kinds=["dynamic"], storage="none")) == (
        "A",
        "Scenario A: dedicated passthrough GPU nodes on local disks",
    )
    assert design._classify(_design(kinds=["dynamic"], storage="mixed")) == (
        "other",
        "passthrough on partly shared storage: none of the designs A, B, C",
    )
    assert design._classify(_design()) == ("other", "no GPU VMs")


def test_fixed_and_dynamic_directpath_together_are_passthrough_designs() -> None:
    both = ["dynamic", "passthrough"]
    assert design._classify(_design(kinds=both, storage="local")) == (
        "A",
        "Scenario A: dedicated passthrough GPU nodes on local disks",
    )
    assert design._classify(_design(kinds=both, storage="shared", spare_gpu_hosts=["h3"])) == (
        "C",
        "Scenario C: passthrough GPU nodes plus a buffer node with a spare GPU",
    )


def test_observe_a_cluster_the_inventory_does_not_hold() -> None:
    observed = design.observe(context(healthy().inv).facts, "gone")
    assert observed == Design("other", "no GPU VMs")


def test_classify_all_names_the_design_of_each_cluster_with_gpu_vms() -> None:
    e = passthrough_estate()
    e.cluster("c1")
    h1, h2 = e.host("h1", "c1"), e.host("h2", "c1")
    e.gpu(h1)
    e.gpu(h2)
    e.datastore("san1", [h1, h2])
    e.vm("v1", h1, ["san1"], vgpu="grid_l4-8q")
    e.cluster("empty")
    assert design.classify_all(context(e.inv).facts) == {"pt": "A", "c1": "B"}
