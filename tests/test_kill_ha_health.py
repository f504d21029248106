"""HA-09 and the admission-control wording (rules/ha_health.py), written out by hand.

The event names are vSphere's (HostDasErrorEvent; com.vmware.vc.HA.* extended events).
"""

from __future__ import annotations

from gpuaudit.inventory import AdmissionControl, ConfigIssue
from gpuaudit.rules import ha_health
from gpuaudit.rules.registry import Outcome
from tests.support.builders import context, healthy
from tests.test_rules_hahealth import cluster, ha_healthy, with_simulations


def test_ha09_healthy_agents_message() -> None:
    e = ha_healthy()
    cluster(e).config_issues = [ConfigIssue("com.vmware.vc.vsan.Event", "not HA")]
    assert ha_health.agent_health(context(e.inv), cluster(e)) == Outcome(
        True,
        "the HA agents of 3 host(s) are healthy; no HA issue is open",
        {
            "agent_states": {"h1": "master", "h2": "connectedToMaster", "h3": "connectedToMaster"},
            "unhealthy": {},
            "ha_issues": [],
        },
    )


def test_ha09_names_each_unhealthy_agent_and_each_ha_issue() -> None:
    e = ha_healthy()
    h1, h2, h3 = e.inv.hosts
    h2.ha_state = "fdmUnreachable"
    h3.ha_state = ""
    cluster(e).config_issues = [ConfigIssue("com.vmware.vc.HA.ClusterFailoverActionFailed", "")]
    h1.config_issues = [
        ConfigIssue("HostDasErrorEvent", "agent error"),
        ConfigIssue("com.vmware.vc.das.HostFailedEvent"),
        ConfigIssue("com.vmware.vc.other.Event", "not HA"),
    ]
    outcome = ha_health.agent_health(context(e.inv), cluster(e))
    assert outcome is not None and not outcome.passed
    assert outcome.message == (
        "HA agent on h2 is fdmUnreachable; HA agent on h3 is no state; "
        "c1: com.vmware.vc.HA.ClusterFailoverActionFailed; "
        "h1: HostDasErrorEvent: agent error; h1: com.vmware.vc.das.HostFailedEvent"
        ": GPU VMs of an affected host may not be restarted"
    )
    assert outcome.evidence["unhealthy"] == {"h2": "fdmUnreachable", "h3": "no state"}


def test_ha09_needs_ha_with_host_monitoring_and_something_read() -> None:
    e = ha_healthy()
    cluster(e).ha_host_monitoring = False
    assert ha_health.agent_health(context(e.inv), cluster(e)) is None
    e = ha_healthy()
    for h in e.inv.hosts:
        h.ha_state = None
    assert ha_health.agent_health(context(e.inv), cluster(e)) is None
    cluster(e).config_issues = [ConfigIssue("HostDasDisabledEvent")]
    outcome = ha_health.agent_health(context(e.inv), cluster(e))
    assert outcome is not None and outcome.message.startswith("c1: HostDasDisabledEvent: ")


def test_admission_control_policies_in_words() -> None:
    e = ha_healthy()
    c = cluster(e)
    c.admission_control = AdmissionControl(True, "percent", cpu_percent=33, memory_percent=25)
    assert ha_health._policy_text(c) == "cluster resource percentage, 33% CPU and 25% memory"
    c.admission_control = AdmissionControl(True, "slots", failover_level=2)
    assert ha_health._policy_text(c) == "slot policy, 2 host failure(s)"
    c.admission_control = AdmissionControl(True, "dedicated-hosts", failover_hosts=["h3", "h4"])
    assert ha_health._policy_text(c) == "dedicated failover hosts h3, h4"
    c.admission_control = AdmissionControl(True, "other")
    assert ha_health._policy_text(c) == "other"
    c.admission_control = AdmissionControl(True, None)
    assert ha_health._policy_text(c) == "policy unknown"


def test_ha11_messages_and_evidence() -> None:
    e = ha_healthy()  # VMCP on: APD restartConservative, PDL restartAggressive; GPU VMs on san1
    c = e.inv.clusters[0]
    evidence = {
        "vmcp_enabled": True,
        "apd_response": "restartConservative",
        "pdl_response": "restartAggressive",
        "san_datastores": ["san1"],
    }
    assert ha_health.storage_protection(context(e.inv), c) == Outcome(
        True,
        "PDL restartAggressive, APD restartConservative: GPU VMs on san1 are restarted after "
        "a storage loss",
        evidence,
    )
    c.vmcp_enabled = False
    assert ha_health.storage_protection(context(e.inv), c) == Outcome(
        False,
        "VM Component Protection is off: GPU VMs on san1 hang with their GPUs held after an "
        "APD or PDL instead of restarting elsewhere",
        evidence | {"vmcp_enabled": False},
    )


def test_ha11_names_every_gap_and_every_san_datastore() -> None:
    e = ha_healthy()
    c = e.inv.clusters[0]
    h1, h2, h3 = e.inv.hosts
    e.datastore("san3", [h1, h2, h3], transport="iscsi")
    e.vm("v4", h1, ["san3"], vgpu="grid_l4-8q")
    c.vmcp_apd, c.vmcp_pdl = "warning", "disabled"
    assert ha_health.storage_protection(context(e.inv), c) == Outcome(
        False,
        "PDL response is disabled; APD response is warning: GPU VMs on san1, san3 are not "
        "restarted after a storage loss",
        {
            "vmcp_enabled": True,
            "apd_response": "warning",
            "pdl_response": "disabled",
            "san_datastores": ["san1", "san3"],
        },
    )


DEFAULT_WANT = {
    "wanted_per_host": 2,
    "wanted_from": "the default of das.heartbeatdsperhost",
    "ignore_insufficient": False,
}


def test_ha12_two_shared_datastores_pass_with_the_whole_verdict() -> None:
    e = ha_healthy()  # san1 and san2 on h1..h3; vCenter picks, preferring the user's list
    c = cluster(e)
    c.heartbeat_datastores = ["san2"]
    assert ha_health.heartbeat_datastores(context(e.inv), c) == Outcome(
        True,
        "every host has at least 2 heartbeat datastores (the default of "
        "das.heartbeatdsperhost; allFeasibleDsWithUserPreference: san1, san2)",
        {
            "policy": "allFeasibleDsWithUserPreference",
            "preferred": ["san2"],
            "candidates": ["san1", "san2"],
            "short_hosts": {},
            **DEFAULT_WANT,
        },
    )


def test_ha12_names_each_host_short_of_heartbeat_datastores() -> None:
    e = ha_healthy()
    c = cluster(e)
    e.datastore("san4", [e.inv.hosts[2]])  # listed, but only h3 reaches it
    c.heartbeat_policy = "userSelectedDs"
    c.heartbeat_datastores = ["san2", "san4"]
    assert ha_health.heartbeat_datastores(context(e.inv), c) == Outcome(
        False,
        "fewer than 2 heartbeat datastores (the default of das.heartbeatdsperhost) on "
        "h1 (1), h2 (1)",
        {
            "policy": "userSelectedDs",
            "preferred": ["san2", "san4"],
            "candidates": ["san2", "san4"],
            "short_hosts": {"h1": 1, "h2": 1},
            **DEFAULT_WANT,
        },
    )


def test_ha12_a_cluster_with_no_shared_datastore_names_every_host() -> None:
    e = ha_healthy()
    c = cluster(e)
    for d in e.inv.datastores:
        d.mounts = d.mounts[:1]  # san1 and san2 on h1 only: shared by no two hosts
    c.heartbeat_policy = "allFeasibleDs"
    assert ha_health.heartbeat_datastores(context(e.inv), c) == Outcome(
        False,
        "fewer than 2 heartbeat datastores (the default of das.heartbeatdsperhost) on "
        "h1 (0), h2 (0), h3 (0)",
        {
            "policy": "allFeasibleDs",
            "preferred": [],
            "candidates": [],
            "short_hosts": {"h1": 0, "h2": 0, "h3": 0},
            **DEFAULT_WANT,
        },
    )


def test_ha12_user_selected_with_none_listed() -> None:
    e = ha_healthy()
    c = cluster(e)
    c.heartbeat_policy = "userSelectedDs"
    assert ha_health.heartbeat_datastores(context(e.inv), c) == Outcome(
        False,
        "the policy allows only user-selected heartbeat datastores and none is listed",
        {
            "policy": "userSelectedDs",
            "preferred": [],
            "candidates": [],
            "short_hosts": {"h1": 0, "h2": 0, "h3": 0},
            **DEFAULT_WANT,
        },
    )


def test_ha12_vsan_only_passes_with_the_whole_verdict() -> None:
    e = ha_healthy()
    for d in e.inv.datastores:
        d.type = "vsan"
    c = cluster(e)
    assert ha_health.heartbeat_datastores(context(e.inv), c) == Outcome(
        True,
        "the only shared datastores are vSAN (san1, san2): HA's agents talk over the vSAN "
        "network, and datastore heartbeats are not relevant",
        {
            "policy": "allFeasibleDsWithUserPreference",
            "preferred": [],
            "candidates": [],
            "vsan_only": ["san1", "san2"],
            **DEFAULT_WANT,
        },
    )


def test_ha12_an_option_above_five_is_not_proven_with_the_whole_verdict() -> None:
    e = ha_healthy()
    c = cluster(e)
    c.ha_options = {"das.heartbeatDsPerHost": "7"}
    reason = (
        "das.heartbeatdsperhost = '7', outside the valid 2 to 5: how many heartbeat "
        "datastores vCenter wants is not known"
    )
    assert ha_health.heartbeat_datastores(context(e.inv), c) == Outcome(
        True,
        f"h1 (2), h2 (2), h3 (2) heartbeat datastores; {reason}",
        {
            "policy": "allFeasibleDsWithUserPreference",
            "preferred": [],
            "candidates": ["san1", "san2"],
            "short_hosts": {},
            "wanted_per_host": None,
            "wanted_from": "das.heartbeatdsperhost = '7', outside the valid 2 to 5",
            "ignore_insufficient": False,
        },
        unproven=reason,
    )


def test_ha12_a_silenced_warning_is_named_in_the_failure() -> None:
    e = healthy()  # san1 only
    c = cluster(e)
    c.heartbeat_policy = "allFeasibleDs"
    c.ha_options = {"das.ignoreinsufficienthbdatastore": " TRUE "}
    assert ha_health.heartbeat_datastores(context(e.inv), c) == Outcome(
        False,
        "fewer than 2 heartbeat datastores (the default of das.heartbeatdsperhost) on "
        "h1 (1), h2 (1), h3 (1); das.ignoreInsufficientHbDatastore is true: it silences "
        "vCenter's warning, not the risk",
        {
            "policy": "allFeasibleDs",
            "preferred": [],
            "candidates": ["san1"],
            "short_hosts": {"h1": 1, "h2": 1, "h3": 1},
            **DEFAULT_WANT,
            "ignore_insufficient": True,
        },
    )


def test_ha10_a_response_gpuaudit_does_not_know_with_the_whole_verdict() -> None:
    e = ha_healthy()
    cluster(e).isolation_response = "powerOff"
    cluster(e).isolation_response_overrides = {"v1": "futureResponse"}
    assert ha_health.isolation_response(context(e.inv), e.inv.vms[0]) == Outcome(
        False,
        "futureResponse (VM override): an isolation response gpuaudit does not know",
        {
            "isolation_response": "futureResponse",
            "source": "VM override",
            "cluster_default": "powerOff",
        },
    )


def test_ha10_leave_powered_on_with_the_whole_verdict() -> None:
    e = ha_healthy()
    cluster(e).isolation_response = "none"
    assert ha_health.isolation_response(context(e.inv), e.inv.vms[1]) == Outcome(
        False,
        "none (cluster default): leave powered on: an isolated host keeps the VM running and "
        "its GPU held, and HA cannot restart it elsewhere while it holds its files, even when "
        "its network is gone",
        {"isolation_response": "none", "source": "cluster default", "cluster_default": "none"},
    )


def test_ha10_needs_a_cluster_watched_by_ha_with_a_response_read() -> None:
    e = ha_healthy()
    vm = e.inv.vms[0]
    cluster(e).isolation_response = None  # not read
    assert ha_health.isolation_response(context(e.inv), vm) is None
    cluster(e).isolation_response = "none"
    cluster(e).ha_enabled = False
    assert ha_health.isolation_response(context(e.inv), vm) is None
    # A VM on a standalone host: no cluster, whatever the clusters are called.
    standalone = e.host("s1", None)
    e.gpu(standalone)
    e.datastore("local-s1", [standalone], transport="local")
    alone = e.vm("s1-vm", standalone, ["local-s1"], vgpu="grid_l4-8q")
    e.cluster("XXXX").isolation_response = "none"
    assert ha_health.isolation_response(context(e.inv), alone) is None


def test_ha13_room_for_exactly_one_host_failure_passes_with_the_whole_verdict() -> None:
    e = ha_healthy()
    c = cluster(e)
    c.admission_control = AdmissionControl(True, "percent", cpu_percent=33, memory_percent=33)
    for i, h in enumerate(e.inv.hosts, 1):
        # Two 8q vGPUs on each 24 GB L4: a lost host's two fit on the other two hosts'
        # free 8 GB each, but two lost hosts' four do not fit on the last one.
        e.vm(f"v{i}-2", h, ["san1"], vgpu="grid_l4-8q")
    assert ha_health.admission_ignores_gpus(with_simulations(e.inv), c) == Outcome(
        True,
        "admission control is on (cluster resource percentage, 33% CPU and 33% memory) but "
        "counts CPU and memory only; the host-failure simulation finds GPU room for N+1",
        {"admission_control": True, "policy": "percent", "gpu_tolerates": 1, "worst_host": "h1"},
    )


def test_ha13_full_gpus_fail_with_the_whole_verdict() -> None:
    e = ha_healthy()
    c = cluster(e)
    c.admission_control = AdmissionControl(True, "slots", failover_level=1)
    for i, h in enumerate(e.inv.hosts, 1):
        for n in (2, 3):  # three 8q vGPUs fill a 24 GB L4
            e.vm(f"v{i}-{n}", h, ["san1"], vgpu="grid_l4-8q")
    assert ha_health.admission_ignores_gpus(with_simulations(e.inv), c) == Outcome(
        False,
        "admission control is on (slot policy, 1 host failure(s)) but counts CPU and memory "
        "only: it does not protect GPU capacity, and the loss of h1 leaves GPU VMs with "
        "nowhere to restart (N+0)",
        {"admission_control": True, "policy": "slots", "gpu_tolerates": 0, "worst_host": "h1"},
    )
