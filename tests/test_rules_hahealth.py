"""HA-09 to HA-13, vSphere HA health and responses: one rule on one object, the
collector's reading of the HA properties, and the hahealth scenario.

The expectations follow the rules' meaning in docs/rules.md. The scenario's own
failures and twins are checked with every other rule's in
tests/test_check_scenarios.py; here, what the rules must not examine there.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest
from pyVmomi import vim

from gpuaudit.inventory import Cluster, ConfigIssue, Host, Inventory
from gpuaudit.model.facts import Facts
from gpuaudit.model.policy import Policy
from gpuaudit.rules import ha_health
from gpuaudit.rules.registry import Context, Outcome
from gpuaudit.simulation.failures import simulate_cluster_notes
from gpuaudit.verdict.check import run_checks
from gpuaudit.vsphere.collect.hahealth import add_cluster_health, add_host_health
from gpuaudit.vsphere.collect.retrieve import ObjectProps
from tests.support.builders import Estate, context, healthy

SCENARIO = Path(__file__).resolve().parent / "scenarios" / "hahealth.yaml"
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
