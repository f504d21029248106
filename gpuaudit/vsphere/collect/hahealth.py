"""vSphere HA health and responses: the HA agent state, open configuration issues,
the isolation and storage (APD/PDL) responses and the heartbeat datastores.

Read from the bulk retrieval only: ``runtime.dasHostState`` and ``configIssue`` of
hosts, ``configurationEx`` and ``configIssue`` of clusters.
"""

from __future__ import annotations

from typing import Any

from gpuaudit.inventory import Cluster, ConfigIssue, Host
from gpuaudit.vsphere.collect.retrieve import ObjectProps

_PER_CLUSTER = "clusterIsolationResponse"  # a VM override that defers to the cluster


def config_issues(obj: ObjectProps) -> list[ConfigIssue]:
    """The object's open configuration issues, by event type and message."""
    return [_issue(event) for event in obj.get("configIssue", [])]


def _issue(event: Any) -> ConfigIssue:
    # An EventEx or ExtendedEvent names its kind by id; other events by their type.
    kind = getattr(event, "eventTypeId", None) or type(event).__name__.rsplit(".", 1)[-1]
    return ConfigIssue(
        kind=str(kind), message=str(getattr(event, "fullFormattedMessage", "") or "")
    )


def add_host_health(host: Host, obj: ObjectProps) -> None:
    """The HA agent state ("" when the host reports none) and the host's issues."""
    if "runtime.dasHostState" not in obj.missing:
        state = obj.get("runtime.dasHostState")
        host.ha_state = str(state.state or "") if state is not None else ""
    host.config_issues = config_issues(obj)


def add_cluster_health(
    cluster: Cluster, obj: ObjectProps, ds_names: dict[str, str], vm_names: dict[str, str]
) -> None:
    """Isolation response, VM Component Protection and heartbeat datastores of a cluster."""
    cluster.config_issues = config_issues(obj)
    config = obj.get("configurationEx")
    das = getattr(config, "dasConfig", None)
    if das is None:
        return
    defaults = das.defaultVmSettings
    cluster.isolation_response = str(getattr(defaults, "isolationResponse", None) or "none")
    cluster.vmcp_enabled = das.vmComponentProtecting == "enabled"
    vmcp = getattr(defaults, "vmComponentProtectionSettings", None)
    cluster.vmcp_apd = str(getattr(vmcp, "vmStorageProtectionForAPD", None) or "disabled")
    cluster.vmcp_pdl = str(getattr(vmcp, "vmStorageProtectionForPDL", None) or "disabled")
    cluster.heartbeat_policy = str(das.hBDatastoreCandidatePolicy or "") or None
    cluster.heartbeat_datastores = [
        ds_names.get(ref._moId, ref._moId) for ref in das.heartbeatDatastore or []
    ]
    for vm_config in getattr(config, "dasVmConfig", None) or []:
        response = getattr(vm_config.dasSettings, "isolationResponse", None)
        if response and response != _PER_CLUSTER:
            name = vm_names.get(vm_config.key._moId, vm_config.key._moId)
            cluster.isolation_response_overrides[name] = str(response)
