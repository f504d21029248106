"""gpuaudit.vsphere.collect.hahealth on host and cluster properties built in memory, by hand.

Values are the vSphere API's: ClusterDasFdmHostState.state (master, connectedToMaster,
...), ClusterVmComponentProtectionSettings (vmStorageProtectionForAPD/PDL), and
configIssue events (an EventEx names its kind by eventTypeId).
"""

from __future__ import annotations

from pyVmomi import vim

from gpuaudit.inventory import Cluster, ConfigIssue, Host
from gpuaudit.vsphere.collect.hahealth import add_cluster_health, add_host_health, config_issues
from gpuaudit.vsphere.collect.retrieve import ObjectProps


def test_config_issues_by_event_id_or_type_with_their_message() -> None:
    events = [
        vim.event.EventEx(
            eventTypeId="com.vmware.vc.HA.DasHostIsolatedEvent",
            fullFormattedMessage="Host esx-01 is isolated",
            key=1,
            chainId=1,
        ),
        vim.event.HostNoRedundantManagementNetworkEvent(
            fullFormattedMessage="No redundant management network", key=2, chainId=2
        ),
        vim.event.HostNoHAEnabledPortGroupsEvent(key=3, chainId=3),
    ]
    obj = ObjectProps(moref="host-1", kind="HostSystem", props={"configIssue": events})
    assert config_issues(obj) == [
        ConfigIssue("com.vmware.vc.HA.DasHostIsolatedEvent", "Host esx-01 is isolated"),
        ConfigIssue("HostNoRedundantManagementNetworkEvent", "No redundant management network"),
        ConfigIssue("HostNoHAEnabledPortGroupsEvent", ""),
    ]
    assert config_issues(ObjectProps(moref="host-2", kind="HostSystem")) == []


def test_an_event_without_a_message_attribute_has_an_empty_message() -> None:
    class Bare:
        pass

    obj = ObjectProps(moref="host-1", kind="HostSystem", props={"configIssue": [Bare()]})
    assert config_issues(obj) == [ConfigIssue("Bare", "")]


def test_host_ha_state_and_issues() -> None:
    host = Host(name="esx-01", moref="host-1")
    issue = vim.event.HostNoHAEnabledPortGroupsEvent(fullFormattedMessage="none", key=3)
    state = vim.cluster.DasFdmHostState(state="connectedToMaster", stateReporter=None)
    obj = ObjectProps(
        moref="host-1",
        kind="HostSystem",
        props={"runtime.dasHostState": state, "configIssue": [issue]},
    )
    add_host_health(host, obj)
    assert (host.ha_state, host.config_issues) == (
        "connectedToMaster",
        [ConfigIssue("HostNoHAEnabledPortGroupsEvent", "none")],
    )
    # A host that reports no state: "" (read, and empty).
    host = Host(name="esx-02", moref="host-2")
    add_host_health(host, ObjectProps(moref="host-2", kind="HostSystem"))
    assert (host.ha_state, host.config_issues) == ("", [])
    host = Host(name="esx-03", moref="host-3")
    add_host_health(
        host,
        ObjectProps(
            moref="host-3",
            kind="HostSystem",
            props={"runtime.dasHostState": vim.cluster.DasFdmHostState(state="")},
        ),
    )
    assert host.ha_state == ""
    # A state the server withheld stays unknown (None).
    host = Host(name="esx-04", moref="host-4")
    add_host_health(
        host,
        ObjectProps(
            moref="host-4", kind="HostSystem", missing={"runtime.dasHostState": "NoPermission"}
        ),
    )
    assert host.ha_state is None


def _cluster_props(das: object, vm_configs: list[object] | None = None) -> ObjectProps:
    config = vim.cluster.ConfigInfoEx(dasConfig=das, dasVmConfig=vm_configs or [])
    issue = vim.event.EventEx(eventTypeId="com.vmware.vc.HA.ClusterFailoverInProgressEvent")
    return ObjectProps(
        moref="domain-c8",
        kind="ClusterComputeResource",
        props={"configurationEx": config, "configIssue": [issue]},
    )


def test_cluster_responses_heartbeats_and_overrides() -> None:
    das = vim.cluster.DasConfigInfo(
        vmComponentProtecting="enabled",
        hBDatastoreCandidatePolicy="allFeasibleDsWithUserPreference",
        heartbeatDatastore=[vim.Datastore("datastore-1"), vim.Datastore("datastore-9")],
        defaultVmSettings=vim.cluster.DasVmSettings(
            isolationResponse="powerOff",
            vmComponentProtectionSettings=vim.cluster.VmComponentProtectionSettings(
                vmStorageProtectionForAPD="restartConservative",
                vmStorageProtectionForPDL="restartAggressive",
            ),
        ),
    )
    overrides = [
        vim.cluster.DasVmConfigInfo(
            key=vim.VirtualMachine("vm-1"),
            dasSettings=vim.cluster.DasVmSettings(isolationResponse="shutdown"),
        ),
        vim.cluster.DasVmConfigInfo(
            key=vim.VirtualMachine("vm-2"),
            dasSettings=vim.cluster.DasVmSettings(isolationResponse="clusterIsolationResponse"),
        ),
        vim.cluster.DasVmConfigInfo(
            key=vim.VirtualMachine("vm-3"), dasSettings=vim.cluster.DasVmSettings()
        ),
        vim.cluster.DasVmConfigInfo(
            key=vim.VirtualMachine("vm-4"),
            dasSettings=vim.cluster.DasVmSettings(isolationResponse="none"),
        ),
    ]
    cluster = Cluster(name="gpu-cl", moref="domain-c8")
    add_cluster_health(
        cluster,
        _cluster_props(das, overrides),
        {"datastore-1": "ds-gpu"},
        {"vm-1": "train-01", "vm-2": "train-02"},
    )
    assert cluster == Cluster(
        name="gpu-cl",
        moref="domain-c8",
        isolation_response="powerOff",
        isolation_response_overrides={"train-01": "shutdown", "vm-4": "none"},
        vmcp_enabled=True,
        vmcp_apd="restartConservative",
        vmcp_pdl="restartAggressive",
        heartbeat_policy="allFeasibleDsWithUserPreference",
        heartbeat_datastores=["ds-gpu", "datastore-9"],
        config_issues=[ConfigIssue("com.vmware.vc.HA.ClusterFailoverInProgressEvent", "")],
    )


def test_unset_cluster_responses_read_as_vsphere_defaults() -> None:
    das = vim.cluster.DasConfigInfo(
        vmComponentProtecting="disabled",
        defaultVmSettings=vim.cluster.DasVmSettings(),
    )
    cluster = Cluster(name="gpu-cl", moref="domain-c8")
    add_cluster_health(cluster, _cluster_props(das), {}, {})
    assert cluster == Cluster(
        name="gpu-cl",
        moref="domain-c8",
        isolation_response="none",
        vmcp_enabled=False,
        vmcp_apd="disabled",
        vmcp_pdl="disabled",
        heartbeat_policy=None,
        config_issues=[ConfigIssue("com.vmware.vc.HA.ClusterFailoverInProgressEvent", "")],
    )
    # An empty policy is no policy.
    das.hBDatastoreCandidatePolicy = ""
    add_cluster_health(cluster, _cluster_props(das), {}, {})
    assert cluster.heartbeat_policy is None


def test_a_cluster_without_ha_settings_keeps_only_its_issues() -> None:
    cluster = Cluster(name="gpu-cl", moref="domain-c8")
    obj = ObjectProps(
        moref="domain-c8",
        kind="ClusterComputeResource",
        props={"configIssue": [vim.event.EventEx(eventTypeId="x.y")]},
    )
    add_cluster_health(cluster, obj, {}, {})
    assert cluster == Cluster(name="gpu-cl", moref="domain-c8", config_issues=[ConfigIssue("x.y")])


def test_no_default_vm_settings_and_an_override_without_settings() -> None:
    das = vim.cluster.DasConfigInfo(vmComponentProtecting="disabled", defaultVmSettings=None)
    overrides = [
        vim.cluster.DasVmConfigInfo(key=vim.VirtualMachine("vm-1"), restartPriority="high"),
        vim.cluster.DasVmConfigInfo(
            key=vim.VirtualMachine("vm-2"),
            dasSettings=vim.cluster.DasVmSettings(isolationResponse="powerOff"),
        ),
    ]
    cluster = Cluster(name="gpu-cl", moref="domain-c8")
    add_cluster_health(cluster, _cluster_props(das, overrides), {}, {"vm-2": "train-02"})
    assert (
        cluster.isolation_response,
        cluster.vmcp_apd,
        cluster.vmcp_pdl,
        cluster.isolation_response_overrides,
    ) == ("none", "disabled", "disabled", {"train-02": "powerOff"})
