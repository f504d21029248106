"""HA-01, HA-02, HA-05 and HA-08 (rules/ha.py): messages, evidence and the grading to
information where VMware HA is not relied on, written out by hand.

healthy() is reference design B (vGPU on shared storage, HA on); passthrough_estate() is
design A (fixed passthrough on local disks, HA off).
"""

from __future__ import annotations

from typing import Any

from gpuaudit.inventory import HOST_AGENT, AdmissionControl, GpuAttachment
from gpuaudit.model.policy import ClusterPolicy, Policy
from gpuaudit.rules import ha
from gpuaudit.rules.registry import Outcome
from gpuaudit.verdict.check import run_checks
from tests.support.builders import Estate, context, healthy, passthrough_estate


def test_ha01_messages_where_ha_is_relied_on() -> None:
    e = healthy()
    c1 = e.inv.clusters[0]
    assert ha.ha_enabled(context(e.inv), c1) == Outcome(
        True,
        "vSphere HA is on with host monitoring",
        {"ha_enabled": True, "host_monitoring": True, "gpu_vms": 3},
    )
    c1.ha_host_monitoring = False
    outcome = ha.ha_enabled(context(e.inv), c1)
    assert (outcome.passed, outcome.severity) == (False, None)
    assert outcome.message == "host monitoring is disabled: HA does not react to a host failure"
    c1.ha_enabled = False
    outcome = ha.ha_enabled(context(e.inv), c1)
    assert outcome.message == "vSphere HA is off: GPU VMs of a failed host are not restarted"


def test_ha01_in_an_observed_design_a_is_medium_and_says_how_to_declare_it() -> None:
    # HA-01 is high; a cluster that only looks like design A is not a declaration, so the
    # failure stays at medium and names the policy key that would make it information.
    e = passthrough_estate()
    outcome = ha.ha_enabled(context(e.inv), e.inv.clusters[0])
    assert outcome == Outcome(
        False,
        "vSphere HA is off: GPU VMs of a failed host are not restarted (design A observed: "
        "VMware HA may not be relied on; if that is the intent, declare it in the policy "
        "(clusters: pt: intent: vm_ha_mandated: false) and this becomes information)",
        {
            "ha_enabled": False,
            "host_monitoring": True,
            "gpu_vms": 2,
            "ha_not_relied_on": "design A observed: VMware HA may not be relied on",
            "intent_declared": False,
        },
        severity="medium",
    )


def test_ha01_a_declared_intent_wins_over_the_design() -> None:
    e = passthrough_estate()
    mandated = Policy(clusters=[ClusterPolicy("pt", intent={"vm_ha_mandated": True})])
    outcome = ha.ha_enabled(context(e.inv, mandated), e.inv.clusters[0])
    assert (outcome.passed, outcome.severity) == (False, None)
    free = Policy(clusters=[ClusterPolicy("pt", intent={"vm_ha_mandated": False})])
    outcome = ha.ha_enabled(context(e.inv, free), e.inv.clusters[0])
    assert outcome.severity == "info"
    assert outcome.message.startswith("intent: VMware HA is not mandated; vSphere HA is off")
    assert ha.ha_not_relied_on(context(e.inv), None) is None


def test_ha02_messages() -> None:
    e = healthy()
    c1 = e.inv.clusters[0]
    c1.admission_control = AdmissionControl(True, None)
    outcome = ha.admission_control(context(e.inv), c1)
    assert outcome is not None and outcome.passed
    assert outcome.message == (
        "admission control is on (policy unknown); it reserves CPU and memory, not GPUs"
    )
    c1.admission_control = AdmissionControl(True, "slots", failover_level=1)
    outcome = ha.admission_control(context(e.inv), c1)
    assert outcome is not None
    assert outcome.message.startswith("admission control is on (slots); ")
    assert outcome.evidence == {
        "enabled": True,
        "policy": "slots",
        "failover_level": 1,
        "cpu_percent": None,
        "memory_percent": None,
        "failover_hosts": [],
    }
    c1.admission_control = AdmissionControl(False)
    outcome = ha.admission_control(context(e.inv), c1)
    assert outcome is not None and not outcome.passed
    assert outcome.message == "admission control is off: restarts may find no CPU or memory"
    c1.ha_enabled = False
    assert ha.admission_control(context(e.inv), c1) is None


def test_ha05_a_vm_whose_restart_is_disabled_and_the_grading_of_failures_only() -> None:
    e = healthy()
    e.inv.vms[0].restart_priority = "disabled"
    disabled = "HA restart disabled: not restarted if h1 fails (its restart priority is disabled)"
    evidence = {"failed_host": "h1", "restart_priority": "disabled"}
    reason = "intent: VMware HA is not mandated"
    free = Policy(clusters=[ClusterPolicy("c1", intent={"vm_ha_mandated": False})])
    for policy, prefix, severity, extra in (
        (None, "", "high", {}),
        (free, f"{reason}; ", "info", {"ha_not_relied_on": reason, "intent_declared": True}),
    ):
        findings = {f.object: f for f in run_checks(e.inv, policy).findings if f.rule == "HA-05"}
        v1 = findings["v1"]
        assert (v1.status, v1.severity, v1.message) == ("fail", severity, prefix + disabled)
        assert (v1.evidence, v1.cluster, v1.host) == (evidence | extra, "c1", "h1")
        # a VM that can restart passes as it is, whatever HA's mandate; either other
        # host's L4 (each at PCI 0000:3b:00.0) has room for it
        for name, host in (("v2", "h2"), ("v3", "h3")):
            f = findings[name]
            to = f.evidence.get("to_host")
            assert to in {"h1", "h2", "h3"} - {host}
            assert (f.status, f.severity) == ("pass", "high")
            assert (f.cluster, f.host) == ("c1", host)
            assert f.message == f"can restart on {to} (0000:3b:00.0) if {host} fails"
            assert f.evidence == {
                "failed_host": host,
                "to_host": to,
                "to_gpu": "0000:3b:00.0",
                "restart_priority": "medium",
            }


def test_ha05_a_vm_with_nowhere_to_restart_with_ha_on_and_off() -> None:
    # two hosts, each L4 full with one grid_l4-24q (24 GB of the L4's 24 GB)
    e = Estate()
    c1 = e.cluster("c1")
    hosts = [e.host(f"h{i}", "c1") for i in (1, 2)]
    for h in hosts:
        e.gpu(h)
    e.datastore("san1", hosts)
    for i, h in enumerate(hosts, 1):
        e.vm(f"v{i}", h, ["san1"], vgpu="grid_l4-24q")

    def v1() -> Any:
        return next(f for f in run_checks(e.inv).findings if f.rule == "HA-05" and f.object == "v1")

    f = v1()
    reason = f.evidence["reason"]  # the simulation's, tested with it
    assert "grid_l4-24q" in reason and "h2" in reason
    assert (f.status, f.message) == ("fail", f"nowhere to restart if h1 fails: {reason}")
    assert (f.cluster, f.host) == ("c1", "h1")
    assert f.evidence == {"failed_host": "h1", "reason": reason, "restart_priority": "medium"}
    c1.ha_enabled = False
    f = v1()
    assert (f.status, f.message) == (
        "fail",
        "vSphere HA does not restart VMs on c1 (HA off or host monitoring disabled): not "
        f"restarted if h1 fails; no room for a manual restart either: {reason}",
    )
    assert f.evidence == {
        "failed_host": "h1",
        "ha_restarts": False,
        "restart_priority": "medium",
        "reason": reason,
    }


def test_ha05_with_ha_off_names_where_a_manual_restart_would_fit() -> None:
    e = healthy()
    e.inv.clusters[0].ha_enabled = False
    findings = {f.object: f for f in run_checks(e.inv).findings if f.rule == "HA-05"}
    f = findings["v1"]
    to = f.evidence.get("manual_restart_host")
    assert to in {"h2", "h3"}  # either other host's L4 has room for v1's 8 GB
    assert (f.cluster, f.host) == ("c1", "h1")
    assert (f.status, f.message) == (
        "fail",
        "vSphere HA does not restart VMs on c1 (HA off or host monitoring disabled): not "
        f"restarted if h1 fails; manual restart would fit on {to} (0000:3b:00.0)",
    )
    assert f.evidence == {
        "failed_host": "h1",
        "ha_restarts": False,
        "restart_priority": "medium",
        "manual_restart_host": to,
        "manual_restart_gpu": "0000:3b:00.0",
    }


def spread_estate() -> Estate:
    """Two hosts with two L4 GPUs each, both spreading ("performance"). On src a 12q VM of
    high priority and a 24q VM each have a GPU of their own; dst runs one 12q VM on
    0000:3b:00.0 and leaves 0000:d8:00.0 empty. When src fails the 12q VM restarts first
    and, spread, takes the empty GPU, which then holds only 12 GB vGPUs: the 24q VM finds
    no GPU, though by hand (12q next to dst's 12q) both fit."""
    e = Estate()
    e.cluster("c")
    src, dst = (e.host(n, "c", profiles=("grid_l4-12q", "grid_l4-24q")) for n in ("src", "dst"))
    for h in (src, dst):
        h.assignment_policy = "performance"
        h.memory_mb = 512 * 1024
    s1, s2 = e.gpu(src, "0000:3b:00.0"), e.gpu(src, "0000:d8:00.0")
    d1, _ = e.gpu(dst, "0000:3b:00.0"), e.gpu(dst, "0000:d8:00.0")
    e.datastore("san1", [src, dst])
    e.vm("small", src, ["san1"], vgpu="grid_l4-12q", gpu=s1, priority="high")
    e.vm("big", src, ["san1"], vgpu="grid_l4-24q", gpu=s2)
    e.vm("resident", dst, ["san1"], vgpu="grid_l4-12q", gpu=d1)
    return e


def test_ha05_and_ha08_a_vm_restartable_only_with_manual_placement() -> None:
    e = spread_estate()
    findings = run_checks(e.inv).findings
    ha05 = {f.object: f for f in findings if f.rule == "HA-05"}
    big = ha05["big"]
    reason = (
        "the hosts' own GPU choice (assignment policy performance) leaves no GPU for it; "
        "a manual placement fits on dst (0000:d8:00.0)"
    )
    assert (big.status, big.severity, big.cluster, big.host) == ("fail", "high", "c", "src")
    assert big.message == f"restartable only with manual placement if src fails: {reason}"
    assert big.evidence == {
        "failed_host": "src",
        "reason": reason,
        "restart_priority": "medium",
        "manual_restart_host": "dst",
        "manual_restart_gpu": "0000:d8:00.0",
    }
    small = ha05["small"]
    assert (small.status, small.cluster, small.host) == ("pass", "c", "src")
    assert small.message == "can restart on dst (0000:d8:00.0) if src fails"
    resident = ha05["resident"]
    assert (resident.status, resident.cluster, resident.host) == ("pass", "c", "dst")
    assert resident.message == "can restart on src (0000:3b:00.0) if dst fails"
    (ha08,) = [f for f in findings if f.rule == "HA-08"]
    assert (ha08.object, ha08.status, ha08.severity, ha08.cluster) == ("c", "fail", "high", "c")
    assert ha08.message == (
        "the loss of src leaves 1 GPU VM(s) with nowhere to restart (N+0): 1 of them "
        "restartable only with manual placement (manual N+1)"
    )
    assert ha08.evidence == {
        "tolerates": 0,
        "ha_restarts": True,
        "manual_tolerates": 1,
        "restart_disabled": [],
        "worst_host": "src",
        "unplaced_at_worst": ["big"],
        "notes": [],
    }


def test_ha03_names_every_datastore_only_the_vms_host_reaches() -> None:
    e = healthy()
    v1 = e.inv.vms[0]
    ctx = context(e.inv)
    assert ha.shared_files(ctx, v1) == Outcome(
        True,
        "every datastore of the VM is accessible from another host of the cluster",
        {"datastores": ["san1"], "pinned": [], "other_hosts_count": 2},
    )
    for name in ("local-a", "local-b"):
        e.datastore(name, [e.inv.hosts[0]], transport="local")
        v1.datastores.append(name)
    assert ha.shared_files(context(e.inv), v1) == Outcome(
        False,
        "no other host of c1 can access local-a, local-b: HA cannot restart it",
        {"datastores": ["san1", "local-a", "local-b"], "pinned": ["local-a", "local-b"]}
        | {"other_hosts_count": 2},
    )


def test_ha04_names_every_fixed_device_where_ha_is_relied_on() -> None:
    e = passthrough_estate()
    mandated = Policy(clusters=[ClusterPolicy("pt", intent={"vm_ha_mandated": True})])
    p1 = e.inv.hosts[0]
    second = e.gpu(p1, "0000:d8:00.0", mode="passthrough")
    pv1 = e.inv.vms[0]
    pv1.gpus.append(
        GpuAttachment(
            "passthrough",
            pci_id=second.pci_id,
            vendor_id=second.vendor_id,
            device_id=second.device_id,
        )
    )
    assert ha.fixed_passthrough(context(e.inv, mandated), pv1) == Outcome(
        False,
        "fixed DirectPath I/O (0000:3b:00.0, 0000:d8:00.0): no vMotion, no HA restart on "
        "another host; use Dynamic DirectPath or application-level HA",
        {"kinds": ["passthrough"], "fixed_devices": ["0000:3b:00.0", "0000:d8:00.0"]},
    )
    vgpu = healthy()
    assert ha.fixed_passthrough(context(vgpu.inv), vgpu.inv.vms[0]) == Outcome(
        True, "no fixed DirectPath I/O device", {"kinds": ["vgpu"], "fixed_devices": []}
    )
    e.inv.vcenter.api_type = HOST_AGENT  # one ESXi host: no vMotion, no HA
    assert ha.fixed_passthrough(context(e.inv, mandated), pv1) is None


def test_ha06_messages_and_evidence() -> None:
    e = healthy()
    # a fourth host without a GPU: no capacity, and not counted among the GPU hosts
    e.host("h4", "c1")
    # v1..v3 take 8 GB of a 24 GB L4 each: one GPU of three
    assert ha.n_plus_one(context(e.inv), e.inv.clusters[0]) == Outcome(
        True,
        "1 of 3 GPUs allocated (33%): within N+1 (2) with all GPU models pooled, a necessary "
        "condition only (HA-08 places each VM on its own model and profile)",
        {
            "allocated_gpus": 1,
            "capacity_gpus": 3,
            "gpu_hosts": 3,
            "largest_host_gpus": 1,
            "limit_gpus": 2,
        },
    )
    for i, host in enumerate(e.inv.hosts[:3], 1):  # four more 8q: 7/3 GPUs
        for j in range(2 if i == 1 else 1):
            e.vm(f"x{i}{j}", host, ["san1"], vgpu="grid_l4-8q")
    assert ha.n_plus_one(context(e.inv), e.inv.clusters[0]) == Outcome(
        False,
        "2.333 of 3 GPUs allocated (78%): above the N+1 limit of 2, so the loss of the "
        "largest host cannot be absorbed even with all GPU models pooled",
        {
            "allocated_gpus": 2.333,
            "capacity_gpus": 3,
            "gpu_hosts": 3,
            "largest_host_gpus": 1,
            "limit_gpus": 2,
        },
    )


def test_ha06_with_vgpus_of_unknown_size() -> None:
    e = healthy()  # three hosts of one L4; v1..v3 take 8 GB of 24 each
    base = {"capacity_gpus": 3, "gpu_hosts": 3, "largest_host_gpus": 1, "limit_gpus": 2}
    e.inv.vms[0].gpus[0] = GpuAttachment("vgpu", profile="grid_l4-odd")
    # 2/3 known, at most 5/3 with the unknown one whole: within the limit of 2 either way.
    assert ha.n_plus_one(context(e.inv), e.inv.clusters[0]) == Outcome(
        True,
        "0.667 to 1.667 of 3 GPUs allocated: within N+1 (2) even if each of the 1 vGPUs of "
        "unknown size (grid_l4-odd) took a whole GPU",
        {
            "allocated_gpus": None,
            "allocated_gpus_known": 0.667,
            "allocated_gpus_at_most": 1.667,
            "unknown_profiles": ["grid_l4-odd"],
            **base,
        },
    )
    e.inv.vms[1].gpus[0] = GpuAttachment("vgpu", profile="grid_l4-odd")
    e.inv.vms[2].gpus[0] = GpuAttachment("vgpu", profile="grid_zz")
    outcome = ha.n_plus_one(context(e.inv), e.inv.clusters[0])
    assert outcome == Outcome(
        True,
        "0 to 3 of 3 GPUs allocated: within N+1 (2) only if the 3 vGPUs of unknown size "
        "(grid_l4-odd, grid_zz) take little enough",
        {
            "allocated_gpus": None,
            "allocated_gpus_known": 0,
            "allocated_gpus_at_most": 3,
            "unknown_profiles": ["grid_l4-odd", "grid_zz"],
            **base,
        },
        unproven="no frame buffer known for grid_l4-odd, grid_zz: neither vCenter nor the "
        "profile name gives one",
    )
    for i in range(3):  # 3 whole GPUs known besides: above the limit whatever the rest
        e.vm(f"p{i}", e.inv.hosts[i], ["san1"], passthrough=e.inv.hosts[i].gpus[0])
    outcome = ha.n_plus_one(context(e.inv), e.inv.clusters[0])
    assert (outcome.passed, outcome.message, outcome.unproven) == (
        False,
        "3 to 6 of 3 GPUs allocated: above the N+1 limit of 2 even without the 3 vGPUs of "
        "unknown size (grid_l4-odd, grid_zz)",
        "",
    )
    # Exactly at the limit counts as within it, both ways.
    e2 = healthy()
    e2.inv.vms[0].gpus[0] = GpuAttachment("vgpu", profile="grid_l4-odd")
    e2.vm("p0", e2.inv.hosts[0], ["san1"], passthrough=e2.inv.hosts[0].gpus[0])
    e2.inv.vms[1].gpus[0] = GpuAttachment("vgpu", profile="grid_l4-24q")
    e2.inv.vms[2].gpus[0] = GpuAttachment("vgpu", profile="grid_l4-odd")
    outcome = ha.n_plus_one(context(e2.inv), e2.inv.clusters[0])
    # Known: p0 and the 24q, exactly the limit: not above it.
    assert outcome.evidence["allocated_gpus_known"] == 2
    assert (outcome.passed, outcome.unproven != "") == (True, True)
    e2.inv.vms[0].gpus[0] = GpuAttachment("vgpu", profile="grid_l4-8q")  # one left unknown
    e2.inv.vms[1].gpus[0] = GpuAttachment("vgpu", profile="grid_l4-12q")
    outcome = ha.n_plus_one(context(e2.inv), e2.inv.clusters[0])
    # Known 1 + 1/3 + 1/2 = 1.833; at most 2.833.
    assert outcome.evidence["allocated_gpus_at_most"] == 2.833
    assert (outcome.passed, outcome.unproven != "") == (True, True)
    # At most exactly the limit: p0 and one unknown vGPU, nothing else.
    e2.inv.vms[0].gpus[0] = GpuAttachment("vgpu", profile="grid_l4-odd")
    e2.inv.vms[1].gpus[:] = []
    e2.inv.vms[2].gpus[:] = []
    outcome = ha.n_plus_one(context(e2.inv), e2.inv.clusters[0])
    assert outcome.evidence["allocated_gpus_at_most"] == 2
    assert (outcome.passed, outcome.unproven) == (True, "")


def test_ha06_without_a_connected_host_has_no_capacity() -> None:
    e = healthy()
    for host in e.inv.hosts:
        host.connection_state = "disconnected"
    outcome = ha.n_plus_one(context(e.inv), e.inv.clusters[0])
    assert outcome == Outcome(
        False,
        "1 of 0 GPUs allocated (n/a): above the N+1 limit of 0, so the loss of the largest "
        "host cannot be absorbed even with all GPU models pooled",
        {
            "allocated_gpus": 1,
            "capacity_gpus": 0,
            "gpu_hosts": 0,
            "largest_host_gpus": 0,
            "limit_gpus": 0,
        },
    )


def test_ha07_messages_and_evidence() -> None:
    e = healthy()
    v1 = e.inv.vms[0]
    assert ha.restart_priority(context(e.inv), v1) == Outcome(
        True, "restart priority medium", {"restart_priority": "medium", "override": None}
    )
    v1.restart_priority = "disabled"
    assert ha.restart_priority(context(e.inv), v1) == Outcome(
        False,
        "restart priority disabled: HA never restarts it",
        {"restart_priority": "disabled", "override": "disabled"},
    )


def ha08(e: Estate) -> Any:
    (found,) = [f for f in run_checks(e.inv).findings if f.rule == "HA-08"]
    return found


def test_ha08_messages_and_evidence() -> None:
    e = healthy()
    for host in e.inv.hosts:
        host.memory_mb = 512 * 1024
    # one L4 per host with room for three 8q: any two hosts may fail
    f = ha08(e)
    assert (f.object, f.status, f.severity, f.cluster) == ("c1", "pass", "high", "c1")
    assert f.message == "tolerates 2 simultaneous host failure(s) (N+2)"
    evidence = {
        "tolerates": 2,
        "ha_restarts": True,
        "manual_tolerates": 2,
        "restart_disabled": [],
        "worst_host": "h1",
        "unplaced_at_worst": [],
        "notes": [],
    }
    assert f.evidence == evidence
    e.inv.vms[0].restart_priority = "disabled"
    f = ha08(e)
    assert (f.status, f.message) == (
        "pass",
        "tolerates 2 simultaneous host failure(s) (N+2); 1 GPU VM(s) with HA restart "
        "disabled are not counted",
    )
    assert f.evidence == evidence | {"restart_disabled": ["v1"], "worst_host": "h2"}
    e.inv.vms[0].restart_priority = None
    e.inv.clusters[0].ha_enabled = False
    f = ha08(e)
    assert (f.status, f.severity) == ("fail", "high")
    assert f.message == (
        "vSphere HA is off or host monitoring is disabled: no GPU VM is restarted after a "
        "host failure (N+0); a manual restart would absorb 2 host failure(s)"
    )
    assert f.evidence["tolerates"] == 0 and f.evidence["ha_restarts"] is False


def test_ha08_when_every_restart_is_disabled() -> None:
    e = healthy()
    for vm in e.inv.vms:
        vm.restart_priority = "disabled"
    f = ha08(e)
    assert (f.status, f.severity) == ("fail", "high")
    assert f.message == (
        "HA restarts none of the 3 powered-on GPU VM(s): restart priority disabled on all"
    )
    assert f.evidence["restart_disabled"] == ["v1", "v2", "v3"]


def test_ha06_allocation_exactly_at_the_limit_passes() -> None:
    e = healthy()
    for i, host in enumerate(e.inv.hosts, 1):  # six 8q in all: 2 GPUs, the limit
        e.vm(f"x{i}", host, ["san1"], vgpu="grid_l4-8q")
    outcome = ha.n_plus_one(context(e.inv), e.inv.clusters[0])
    assert (outcome.passed, outcome.message) == (
        True,
        "2 of 3 GPUs allocated (67%): within N+1 (2) with all GPU models pooled, a necessary "
        "condition only (HA-08 places each VM on its own model and profile)",
    )


def test_ha08_one_host_failure_tolerated_after_a_cluster_without_gpu_vms() -> None:
    e = Estate()
    e.cluster("a-idle")  # a GPU host and no GPU VM: simulated, but nothing to judge
    e.gpu(e.host("idle1", "a-idle"))
    e.cluster("pair")
    hosts = [e.host(f"p{i}", "pair") for i in (1, 2)]
    for h in hosts:
        e.gpu(h)
        h.memory_mb = 512 * 1024
    e.datastore("san1", hosts)
    # one 8q VM: it restarts on the other host, and nothing is left when both fail
    e.vm("only", hosts[0], ["san1"], vgpu="grid_l4-8q")
    findings = [f for f in run_checks(e.inv).findings if f.rule == "HA-08"]
    assert [(f.object, f.status, f.message) for f in findings] == [
        ("pair", "pass", "tolerates 1 simultaneous host failure(s) (N+1)")
    ]
    assert findings[0].evidence == {
        "tolerates": 1,
        "ha_restarts": True,
        "manual_tolerates": 1,
        "restart_disabled": [],
        "worst_host": "p1",
        "unplaced_at_worst": [],
        "notes": [],
    }


def test_a_passing_check_stays_passing_where_ha_is_not_relied_on() -> None:
    e = healthy()
    free = Policy(clusters=[ClusterPolicy("c1", intent={"vm_ha_mandated": False})])
    assert ha.ha_enabled(context(e.inv, free), e.inv.clusters[0]) == Outcome(
        True,
        "vSphere HA is on with host monitoring",
        {"ha_enabled": True, "host_monitoring": True, "gpu_vms": 3},
    )
