"""HA-09 to HA-13, vSphere HA health and responses: one rule on one object, the
collector's reading of the HA properties, and the hahealth scenario.

The expectations follow the rules' meaning in docs/rules.md. The scenario's own
failures and twins are checked with every other rule's in
tests/verdict/test_check_scenarios.py; here, what the rules must not examine there.

Then HA-09 and the admission-control wording (rules/ha_health.py), written out by
hand. The event names are vSphere's (HostDasErrorEvent; com.vmware.vc.HA.* extended
events).
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest
from pyVmomi import vim

from gpuaudit.inventory import AdmissionControl, Cluster, ConfigIssue, Host, Inventory
from gpuaudit.model.facts import Facts
from gpuaudit.model.policy import Policy
from gpuaudit.rules import ha_health
from gpuaudit.rules.registry import Context, Outcome
from gpuaudit.simulation.failures import simulate_cluster_notes
from gpuaudit.verdict.check import run_checks
from gpuaudit.vsphere.collect.hahealth import add_cluster_health, add_host_health
from gpuaudit.vsphere.collect.retrieve import ObjectProps
from tests.support.builders import Estate, context, healthy

SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "hahealth.yaml"
OUR_RULES = ("HA-09", "HA-10", "HA-11", "HA-12", "HA-13")


def ha_healthy() -> Estate:
    """builders.healthy() with the HA health read: agents healthy, power off on isolation,
    VMCP restarting on APD and PDL, a second shared datastore for heartbeats."""
    e = healthy()
    c = e.inv.clusters[0]
    c.isolation_response = "powerOff"
    c.vmcp_enabled, c.vmcp_apd, c.vmcp_pdl = True, "restartConservative", "restartAggressive"
    c.heartbeat_policy = "allFeasibleDsWithUserPreference"
    for i, h in enumerate(e.inv.hosts):
        h.ha_state = "master" if i == 0 else "connectedToMaster"
    e.datastore("san2", e.inv.hosts)
    return e


def cluster(e: Estate) -> Cluster:
    return e.inv.clusters[0]


def outcome(check: Any, ctx: Context, obj: Any) -> Outcome:
    result = check(ctx, obj)
    assert result is not None, "the rule does not apply to the object"
    assert isinstance(result, Outcome)
    return result


def with_simulations(inv: Inventory) -> Context:
    facts = Facts(inv)
    sims = {c.name: simulate_cluster_notes(inv, c.name, facts) for c in inv.clusters}
    return Context(facts=facts, policy=Policy.default(), simulations=sims, today=date(2027, 1, 15))


# --- HA-09: the HA agents and HA configuration issues -------------------------------------


def test_ha09_a_master_and_connected_agents_pass() -> None:
    e = ha_healthy()
    assert outcome(ha_health.agent_health, context(e.inv), cluster(e)).passed


def test_ha09_an_isolated_agent_fails_and_names_its_host() -> None:
    e = ha_healthy()
    e.inv.hosts[1].ha_state = "networkIsolated"
    result = outcome(ha_health.agent_health, context(e.inv), cluster(e))
    assert not result.passed
    assert result.evidence["unhealthy"] == {"h2": "networkIsolated"}


def test_ha09_a_host_without_an_agent_state_fails() -> None:
    e = ha_healthy()
    e.inv.hosts[2].ha_state = ""
    result = outcome(ha_health.agent_health, context(e.inv), cluster(e))
    assert not result.passed
    assert result.evidence["unhealthy"] == {"h3": "no state"}


def test_ha09_an_ha_issue_on_a_host_fails() -> None:
    e = ha_healthy()
    e.inv.hosts[0].config_issues = [ConfigIssue("HostNoRedundantManagementNetworkEvent", "x")]
    result = outcome(ha_health.agent_health, context(e.inv), cluster(e))
    assert not result.passed
    assert result.evidence["ha_issues"] == ["h1: HostNoRedundantManagementNetworkEvent: x"]


def test_ha09_an_ha_extended_event_on_the_cluster_fails() -> None:
    e = ha_healthy()
    cluster(e).config_issues = [ConfigIssue("com.vmware.vc.HA.HostStateChangedEvent")]
    assert not outcome(ha_health.agent_health, context(e.inv), cluster(e)).passed


def test_ha09_an_issue_outside_ha_passes() -> None:
    e = ha_healthy()
    cluster(e).config_issues = [ConfigIssue("ClusterOvercommittedEvent", "overcommitted")]
    result = outcome(ha_health.agent_health, context(e.inv), cluster(e))
    assert result.passed and result.evidence["ha_issues"] == []


def test_ha09_a_host_in_maintenance_is_not_examined() -> None:
    e = ha_healthy()
    e.inv.hosts[2].in_maintenance = True
    e.inv.hosts[2].ha_state = ""
    result = outcome(ha_health.agent_health, context(e.inv), cluster(e))
    assert result.passed and "h3" not in result.evidence["agent_states"]


def test_ha09_does_not_apply_with_ha_off_or_states_unread() -> None:
    e = ha_healthy()
    cluster(e).ha_enabled = False
    assert ha_health.agent_health(context(e.inv), cluster(e)) is None
    unread = healthy()  # an inventory from before these fields
    assert ha_health.agent_health(context(unread.inv), cluster(unread)) is None


# --- HA-10: the isolation response --------------------------------------------------------


def test_ha10_power_off_and_shutdown_pass() -> None:
    e = ha_healthy()
    vm = e.inv.vms[0]
    assert outcome(ha_health.isolation_response, context(e.inv), vm).passed
    cluster(e).isolation_response = "shutdown"
    assert outcome(ha_health.isolation_response, context(e.inv), vm).passed


def test_ha10_leave_powered_on_fails() -> None:
    e = ha_healthy()
    cluster(e).isolation_response = "none"
    result = outcome(ha_health.isolation_response, context(e.inv), e.inv.vms[0])
    assert not result.passed
    assert result.evidence["source"] == "cluster default"


def test_ha10_a_vm_override_counts_over_the_cluster_default() -> None:
    e = ha_healthy()
    cluster(e).isolation_response_overrides = {"v1": "none"}
    cluster(e).isolation_response = "powerOff"
    result = outcome(ha_health.isolation_response, context(e.inv), e.inv.vms[0])
    assert not result.passed and result.evidence["source"] == "VM override"
    cluster(e).isolation_response = "none"
    cluster(e).isolation_response_overrides = {"v1": "powerOff"}
    assert outcome(ha_health.isolation_response, context(e.inv), e.inv.vms[0]).passed


def test_ha10_does_not_apply_without_restart_or_to_fixed_passthrough() -> None:
    e = ha_healthy()
    cluster(e).isolation_response = "none"
    cluster(e).restart_priority_overrides = {"v1": "disabled"}
    e.inv.vms[0].restart_priority = "disabled"
    assert ha_health.isolation_response(context(e.inv), e.inv.vms[0]) is None
    pt = Estate()
    pt.cluster("c1").isolation_response = "none"
    host = pt.host("h1", "c1")
    gpu = pt.gpu(host, mode="passthrough")
    pt.datastore("san1", [host])
    vm = pt.vm("pt1", host, ["san1"], passthrough=gpu)
    assert ha_health.isolation_response(context(pt.inv), vm) is None


# --- HA-11: APD and PDL responses ---------------------------------------------------------


def test_ha11_restarts_on_apd_and_pdl_pass() -> None:
    e = ha_healthy()
    result = outcome(ha_health.storage_protection, context(e.inv), cluster(e))
    assert result.passed and result.evidence["san_datastores"] == ["san1"]


def test_ha11_vmcp_off_on_san_fails() -> None:
    e = ha_healthy()
    cluster(e).vmcp_enabled = False
    assert not outcome(ha_health.storage_protection, context(e.inv), cluster(e)).passed


def test_ha11_a_pdl_that_only_warns_fails() -> None:
    e = ha_healthy()
    cluster(e).vmcp_pdl = "warning"
    result = outcome(ha_health.storage_protection, context(e.inv), cluster(e))
    assert not result.passed and "PDL response is warning" in result.message


def test_ha11_an_apd_left_disabled_fails() -> None:
    e = ha_healthy()
    cluster(e).vmcp_apd = "disabled"
    assert not outcome(ha_health.storage_protection, context(e.inv), cluster(e)).passed


def test_ha11_does_not_apply_to_gpu_vms_on_nfs() -> None:
    e = Estate()
    e.cluster("c1").vmcp_enabled = False
    hosts = [e.host("h1", "c1"), e.host("h2", "c1")]
    for h in hosts:
        e.gpu(h)
    e.datastore("nfs1", hosts, transport="nfs")
    e.vm("v1", hosts[0], ["nfs1"], vgpu="grid_l4-8q")
    assert ha_health.storage_protection(context(e.inv), cluster(e)) is None


# --- HA-12: heartbeat datastores ----------------------------------------------------------


def test_ha12_two_shared_datastores_pass() -> None:
    e = ha_healthy()
    result = outcome(ha_health.heartbeat_datastores, context(e.inv), cluster(e))
    assert result.passed and result.evidence["candidates"] == ["san1", "san2"]


def test_ha12_one_shared_datastore_fails_for_every_host() -> None:
    e = healthy()
    cluster(e).heartbeat_policy = "allFeasibleDs"
    result = outcome(ha_health.heartbeat_datastores, context(e.inv), cluster(e))
    assert not result.passed
    assert result.evidence["short_hosts"] == {"h1": 1, "h2": 1, "h3": 1}


def test_ha12_user_selected_with_one_listed_fails_though_two_are_shared() -> None:
    e = ha_healthy()
    cluster(e).heartbeat_policy = "userSelectedDs"
    cluster(e).heartbeat_datastores = ["san2"]
    assert not outcome(ha_health.heartbeat_datastores, context(e.inv), cluster(e)).passed
    cluster(e).heartbeat_datastores = []
    result = outcome(ha_health.heartbeat_datastores, context(e.inv), cluster(e))
    assert not result.passed and "none is listed" in result.message


def test_ha12_a_vsan_datastore_is_no_heartbeat_datastore() -> None:
    # Beside a shared FC datastore, vCenter picks heartbeat datastores from the FC one.
    e = ha_healthy()
    next(d for d in e.inv.datastores if d.name == "san2").type = "vsan"
    result = outcome(ha_health.heartbeat_datastores, context(e.inv), cluster(e))
    assert not result.passed
    assert result.evidence["short_hosts"] == {"h1": 1, "h2": 1, "h3": 1}


def test_ha12_a_cluster_sharing_only_vsan_passes() -> None:
    # vCAT, Architecting a vSphere Compute Platform, 8.1.8: "In a vSAN environment ...
    # Datastore heartbeats are no longer relevant".
    e = ha_healthy()
    for d in e.inv.datastores:
        d.type = "vsan"
    result = outcome(ha_health.heartbeat_datastores, context(e.inv), cluster(e))
    assert result.passed and not result.unproven
    assert "datastore heartbeats are not relevant" in result.message
    # whatever the candidate policy: vCenter cannot pick a vSAN datastore anyway
    cluster(e).heartbeat_policy = "userSelectedDs"
    assert outcome(ha_health.heartbeat_datastores, context(e.inv), cluster(e)).passed


def test_ha12_vsan_only_means_every_shared_datastore() -> None:
    e = ha_healthy()
    next(d for d in e.inv.datastores if d.name == "san2").type = "vsan"
    e.datastore("local1", e.inv.hosts[:1], transport="local")  # shared by no two hosts
    result = outcome(ha_health.heartbeat_datastores, context(e.inv), cluster(e))
    assert not result.passed  # san1 (FC) is shared too


def test_ha12_no_shared_datastore_at_all_fails() -> None:
    e = ha_healthy()
    for d in e.inv.datastores:
        d.type = "vsan"
        d.mounts = d.mounts[:1]
    assert not outcome(ha_health.heartbeat_datastores, context(e.inv), cluster(e)).passed


@pytest.mark.parametrize(
    ("option", "shared", "status"),
    [
        # "das.heartbeatdsperhost ... The default is two and the maximum valid value is five."
        (None, 2, "pass"),
        ("3", 2, "fail"),
        ("3", 3, "pass"),
        ("5", 4, "fail"),
        ("5", 5, "pass"),
        (" 2 ", 2, "pass"),
        # No VMware document gives what vCenter does with another value: fewer than two
        # is short whatever it does, five is enough, and between is not proven.
        ("6", 1, "fail"),
        ("6", 2, "unproven"),
        ("6", 4, "unproven"),
        ("6", 5, "pass"),
        ("1", 1, "fail"),
        ("1", 2, "unproven"),
        ("two", 3, "unproven"),
        ("", 2, "unproven"),
    ],
)
def test_ha12_wants_what_das_heartbeatdsperhost_asks(
    option: str | None, shared: int, status: str
) -> None:
    e = healthy()  # san1 on h1..h3
    for i in range(2, shared + 1):
        e.datastore(f"san{i}", e.inv.hosts)
    c = cluster(e)
    c.heartbeat_policy = "allFeasibleDs"
    if option is not None:
        c.ha_options = {"das.heartbeatDsPerHost": option}
    result = outcome(ha_health.heartbeat_datastores, context(e.inv), c)
    assert ("unproven" if result.unproven else "pass" if result.passed else "fail") == status


def test_ha12_the_option_sets_the_count_in_the_message() -> None:
    e = ha_healthy()
    cluster(e).ha_options = {"das.heartbeatdsperhost": "3"}
    result = outcome(ha_health.heartbeat_datastores, context(e.inv), cluster(e))
    assert result.message == (
        "fewer than 3 heartbeat datastores (das.heartbeatdsperhost = 3) on h1 (2), h2 (2), h3 (2)"
    )


@pytest.mark.parametrize("value", ["true", "True", "TRUE"])
def test_ha12_ignoring_insufficient_datastores_never_makes_it_pass(value: str) -> None:
    e = healthy()  # one shared datastore
    cluster(e).heartbeat_policy = "allFeasibleDs"
    cluster(e).ha_options = {"das.ignoreInsufficientHbDatastore": value}
    result = outcome(ha_health.heartbeat_datastores, context(e.inv), cluster(e))
    assert not result.passed
    assert "das.ignoreInsufficientHbDatastore is true" in result.message


def test_ha12_ignoring_insufficient_datastores_is_not_named_where_there_are_enough() -> None:
    e = ha_healthy()
    cluster(e).ha_options = {"das.ignoreInsufficientHbDatastore": "true"}
    result = outcome(ha_health.heartbeat_datastores, context(e.inv), cluster(e))
    assert result.passed and "ignoreInsufficient" not in result.message
    assert result.evidence["ignore_insufficient"] is True


def test_ha12_an_ignore_option_set_false_is_no_silence() -> None:
    e = healthy()
    cluster(e).heartbeat_policy = "allFeasibleDs"
    cluster(e).ha_options = {"das.ignoreInsufficientHbDatastore": "false"}
    result = outcome(ha_health.heartbeat_datastores, context(e.inv), cluster(e))
    assert not result.passed and "ignoreInsufficient" not in result.message


# --- HA-13: admission control ignores GPUs ------------------------------------------------


def test_ha13_admission_control_with_gpu_room_for_a_host_failure_passes() -> None:
    e = ha_healthy()  # three L4s, one 8q vGPU each: a failed host's VM fits on another
    result = outcome(ha_health.admission_ignores_gpus, with_simulations(e.inv), cluster(e))
    assert result.passed
    assert "counts CPU and memory only" in result.message


def test_ha13_admission_control_on_full_gpus_fails() -> None:
    e = ha_healthy()
    for i, h in enumerate(e.inv.hosts, 1):
        for n in (2, 3):  # three 8q vGPUs fill a 24 GB L4
            e.vm(f"v{i}-{n}", h, ["san1"], vgpu="grid_l4-8q")
    result = outcome(ha_health.admission_ignores_gpus, with_simulations(e.inv), cluster(e))
    assert not result.passed and result.evidence["gpu_tolerates"] == 0


def test_ha13_does_not_apply_with_admission_control_off() -> None:
    e = ha_healthy()
    cluster(e).admission_control.enabled = False
    assert ha_health.admission_ignores_gpus(with_simulations(e.inv), cluster(e)) is None


# --- the collector ------------------------------------------------------------------------


def props(kind: str, values: dict[str, Any], missing: dict[str, str] | None = None) -> ObjectProps:
    return ObjectProps("x-1", kind, {"name": "x", **values}, missing or {})


def test_collector_reads_agent_state_and_issues_of_a_host() -> None:
    event = vim.event.HostNoRedundantManagementNetworkEvent(fullFormattedMessage="no redundancy")
    extended = vim.event.EventEx(eventTypeId="com.vmware.vc.HA.AgentErrorEvent")
    host = Host("x", "host-1")
    add_host_health(
        host,
        props(
            "HostSystem",
            {
                "runtime.dasHostState": vim.cluster.DasFdmHostState(state="networkIsolated"),
                "configIssue": [event, extended],
            },
        ),
    )
    assert host.ha_state == "networkIsolated"
    assert host.config_issues == [
        ConfigIssue("HostNoRedundantManagementNetworkEvent", "no redundancy"),
        ConfigIssue("com.vmware.vc.HA.AgentErrorEvent", ""),
    ]


def test_collector_tells_an_unset_agent_state_from_an_unreadable_one() -> None:
    unset = Host("x", "host-1")
    add_host_health(unset, props("HostSystem", {}))
    assert unset.ha_state == ""
    unread = Host("x", "host-1")
    add_host_health(unread, props("HostSystem", {}, {"runtime.dasHostState": "NoPermission"}))
    assert unread.ha_state is None


def test_collector_reads_the_responses_and_heartbeat_datastores_of_a_cluster() -> None:
    ds = vim.Datastore("datastore-7")
    vm1, vm2 = vim.VirtualMachine("vm-1"), vim.VirtualMachine("vm-2")
    das = vim.cluster.DasConfigInfo(
        vmComponentProtecting="enabled",
        hBDatastoreCandidatePolicy="userSelectedDs",
        heartbeatDatastore=[ds],
        defaultVmSettings=vim.cluster.DasVmSettings(
            isolationResponse="shutdown",
            vmComponentProtectionSettings=vim.cluster.VmComponentProtectionSettings(
                vmStorageProtectionForAPD="restartAggressive",
                vmStorageProtectionForPDL="warning",
            ),
        ),
    )
    overrides = [
        vim.cluster.DasVmConfigInfo(
            key=vm1, dasSettings=vim.cluster.DasVmSettings(isolationResponse="none")
        ),
        vim.cluster.DasVmConfigInfo(
            key=vm2,
            dasSettings=vim.cluster.DasVmSettings(isolationResponse="clusterIsolationResponse"),
        ),
    ]
    config = vim.cluster.ConfigInfoEx(dasConfig=das, dasVmConfig=overrides)
    cluster = Cluster("c", "domain-c1")
    add_cluster_health(
        cluster,
        props("ClusterComputeResource", {"configurationEx": config}),
        {"datastore-7": "san-7"},
        {"vm-1": "gpu-vm-1", "vm-2": "gpu-vm-2"},
    )
    assert cluster.isolation_response == "shutdown"
    assert cluster.isolation_response_overrides == {"gpu-vm-1": "none"}
    assert (cluster.vmcp_enabled, cluster.vmcp_apd, cluster.vmcp_pdl) == (
        True,
        "restartAggressive",
        "warning",
    )
    assert cluster.heartbeat_policy == "userSelectedDs"
    assert cluster.heartbeat_datastores == ["san-7"]


# --- the hahealth scenario ----------------------------------------------------------------


def scenario_findings() -> list[Any]:
    from tests.lab.expected import expected_inventory
    from tests.lab.scenario import load_scenario

    result = run_checks(expected_inventory(load_scenario(SCENARIO)), None, date(2027, 1, 15))
    assert result.errors == []
    return [f for f in result.findings if f.rule in OUR_RULES]


def test_no_rule_examines_a_cluster_with_ha_off() -> None:
    findings = scenario_findings()
    assert not [f for f in findings if f.cluster == "hah-off"]


def test_ha11_does_not_examine_a_cluster_on_nfs_in_the_scenario() -> None:
    assert not [f for f in scenario_findings() if f.rule == "HA-11" and f.cluster == "hah-nfs"]


def test_ha13_leaves_a_cluster_with_admission_control_off_to_ha02() -> None:
    findings = scenario_findings()
    assert not [f for f in findings if f.rule == "HA-13" and f.cluster == "hah-apd"]


# --- HA-09 and admission control, by hand -------------------------------------------------


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
