"""vSphere HA health and responses on clusters with GPU VMs: is the HA agent healthy,
and what does HA do to a GPU VM when its host is isolated or loses its storage?"""

from __future__ import annotations

from gpuaudit.inventory import Cluster, ConfigIssue, Datastore, Vm
from gpuaudit.results import Reference
from gpuaudit.rules import scopes, sources
from gpuaudit.rules.registry import Context, Outcome, not_proven, rule

# The HA agent (FDM) states of a host that takes part in HA as it should.
HEALTHY_STATES = frozenset({"master", "connectedToMaster"})

# configIssue events that concern vSphere HA: the HostDasEvent family, the cluster's
# HA events, and the extended events whose ids vSphere HA uses.
_HA_EVENTS = frozenset(
    {
        "HostDasErrorEvent",
        "HostDasDisabledEvent",
        "HostDasDisablingEvent",
        "HostExtraNetworksEvent",
        "HostIsolationIpPingFailedEvent",
        "HostMissingNetworksEvent",
        "HostNoAvailableNetworksEvent",
        "HostNoHAEnabledPortGroupsEvent",
        "HostNoRedundantManagementNetworkEvent",
        "HostNotInClusterEvent",
        "HostPrimaryAgentNotShortNameEvent",
        "HostShortNameInconsistentEvent",
        "DasAgentUnavailableEvent",
        "DasClusterIsolatedEvent",
        "DasHostFailedEvent",
        "DasHostIsolatedEvent",
        "InsufficientFailoverResourcesEvent",
    }
)
_HA_EVENT_PREFIXES = ("com.vmware.vc.HA.", "com.vmware.vc.das.")

# Isolation responses that free an isolated GPU VM for a restart on another host.
RELEASING_RESPONSES = frozenset({"powerOff", "shutdown"})

# Datastore transports on which HA's VM Component Protection detects APD and PDL.
SAN_TRANSPORTS = frozenset({"fc", "fcoe", "iscsi"})
APD_RESTARTS = frozenset({"restartConservative", "restartAggressive"})
PDL_RESTARTS = frozenset({"restartAggressive"})

# Heartbeat datastores vCenter selects per host: "You can use the advanced option
# das.heartbeatdsperhost to change the number of heartbeat datastores selected by vCenter
# Server for each host. The default is two and the maximum valid value is five." (vSphere
# Availability 7.0, Datastore Heartbeating). VMware documents no minimum; Duncan Epping's
# HA deep dive gives "value should be between 2 and 5" (Yellow Bricks, "HA Architecture
# Series - Advanced Settings", https://www.yellow-bricks.com/2011/07/28/ha-architecture-series-advanced-settings-55/).
HEARTBEAT_PER_HOST = "das.heartbeatdsperhost"
HEARTBEAT_DATASTORES = 2
MAX_HEARTBEAT_DATASTORES = 5
# "Suppress the host config issue that the number of heartbeat datastores is less than
# das.heartbeatDsPerHost" (the same page): it hides vCenter's warning, not the shortfall.
IGNORE_INSUFFICIENT = "das.ignoreInsufficientHbDatastore"

_AVAILABILITY = (
    "https://techdocs.broadcom.com/us/en/vmware-cis/vsphere/vsphere/8-0/vsphere-availability.html"
)
REFERENCES: dict[str, list[Reference | tuple[str, str]]] = {
    "HA-09": [
        (
            "vSphere API: ClusterDasFdmAvailabilityState (HA agent states)",
            "https://developer.broadcom.com/xapis/vsan-management-api/8.0u1/"
            "vim.cluster.DasFdmAvailabilityState.html",
        ),
        (
            "vSphere API: ClusterDasFdmHostState",
            "https://developer.broadcom.com/xapis/virtual-infrastructure-json-api/latest/"
            "data-structures/ClusterDasFdmHostState",
        ),
        ("vSphere Availability (vSphere 8.0)", _AVAILABILITY),
    ],
    "HA-10": [
        (
            "Broadcom KB 322784: vSphere HA host isolation response",
            "https://knowledge.broadcom.com/external/article/322784/"
            "vmware-vsphere-high-availability-host-is.html",
        ),
        (
            "vSphere API: ClusterDasVmSettingsIsolationResponse",
            "https://developer.broadcom.com/xapis/virtual-infrastructure-json-api/latest/"
            "data-structures/ClusterDasVmSettingsIsolationResponse_enum",
        ),
        ("vSphere Availability (vSphere 8.0)", _AVAILABILITY),
    ],
    "HA-11": [
        (
            "vSphere Storage: Storage connectivity and vSphere HA (APD and PDL)",
            "https://docs.vmware.com/en/VMware-vSphere/6.7/com.vmware.vsphere.storage.doc/"
            "GUID-AA39FBEF-AF50-4D67-9362-32FA4A6C9105.html",
        ),
        (
            "vSphere API: ClusterVmComponentProtectionSettingsStorageVmReaction",
            "https://vdc-download.vmware.com/vmwb-repository/dcr-public/"
            "6b586ed2-655c-49d9-9029-bc416323cb22/fa0b429a-a695-4c11-b7d2-2cbc284049dc/doc/"
            "vim.cluster.VmComponentProtectionSettings.StorageVmReaction.html",
        ),
        ("vSphere Availability (vSphere 8.0)", _AVAILABILITY),
    ],
    "HA-12": [
        (
            "vSphere Availability: Datastore heartbeating",
            "https://docs.vmware.com/en/VMware-vSphere/7.0/com.vmware.vsphere.avail.doc/"
            "GUID-0502B198-F5F7-4101-969C-C5B6F364C678.html",
        ),
        (
            "VMware vCAT: Architecting a vSphere Compute Platform, 8.1.8 Heartbeat Datastores "
            "(vSAN: datastore heartbeats are no longer relevant)",
            "https://download3.vmware.com/vcat/vmw-vcloud-architecture-toolkit-spv1-webworks/"
            "Core%20Platform/Architecting%20a%20vSphere%20Compute%20Platform/"
            "Architecting%20a%20vSphere%20Compute%20Platform.1.068.html",
        ),
        (
            "vSphere Automation API: HA heartbeat datastore policy",
            "https://developer.vmware.com/apis/vsphere-automation/latest/appliance/"
            "data-structures/Vcenter/Settings/V1/Config/Components/Inventory/Cluster/Ha/"
            "HeartBeatDataStores/",
        ),
    ],
    "HA-13": [
        sources.HA_ADMISSION_CONTROL,
        (
            "vSphere Availability 6.0: Best practices for admission control",
            "https://pubs.vmware.com/vsphere-60/topic/com.vmware.vsphere.avail.doc/"
            "GUID-BD6D9434-84C8-4937-BC76-04852F5EA136.html",
        ),
    ],
}


def is_ha_issue(issue: ConfigIssue) -> bool:
    """Whether a configuration issue is one of vSphere HA's."""
    return issue.kind in _HA_EVENTS or issue.kind.startswith(_HA_EVENT_PREFIXES)


def _issue_text(issue: ConfigIssue) -> str:
    return f"{issue.kind}: {issue.message}" if issue.message else issue.kind


def _ha_watches(cluster: Cluster) -> bool:
    """HA is on with host monitoring: only then do its agents and responses act."""
    return cluster.ha_enabled and cluster.ha_host_monitoring


def agent_health(ctx: Context, cluster: Cluster) -> Outcome | None:
    if not _ha_watches(cluster):
        return None  # HA-01 covers it
    hosts = ctx.facts.active_hosts(cluster.name)
    states = {h.name: h.ha_state for h in hosts if h.ha_state is not None}
    if not states and not cluster.config_issues:
        return None  # not read (an inventory from before these fields)
    unhealthy = {name: state or "no state" for name, state in states.items()}
    unhealthy = {n: s for n, s in unhealthy.items() if s not in HEALTHY_STATES}
    issues = [f"{cluster.name}: {_issue_text(i)}" for i in cluster.config_issues if is_ha_issue(i)]
    issues += [
        f"{h.name}: {_issue_text(i)}" for h in hosts for i in h.config_issues if is_ha_issue(i)
    ]
    evidence = {"agent_states": states, "unhealthy": unhealthy, "ha_issues": issues}
    problems = [f"HA agent on {n} is {s}" for n, s in unhealthy.items()] + issues
    if problems:
        message = "; ".join(problems) + ": GPU VMs of an affected host may not be restarted"
    else:
        message = f"the HA agents of {len(states)} host(s) are healthy; no HA issue is open"
    return Outcome(not problems, message, evidence)


rule(
    id="HA-09",
    title="A host's vSphere HA agent is not healthy, or HA reports a configuration issue",
    category="ha",
    severity="high",
    scope=scopes.CLUSTERS_WITH_GPU_VMS,
    rationale="""vSphere HA restarts a failed host's VMs only through its agents (FDM): one
        host is the master, every other active host is connected to it. A host whose agent is
        unreachable, in election, partitioned from the master, isolated or failed to
        initialise is not protected, and its GPU VMs are not restarted when it fails. The
        configuration issues vCenter keeps open on the cluster or a host (no redundant
        management network, insufficient failover resources, a failed or isolated host, an
        HA agent error) say the same ahead of a failure. Hosts in maintenance mode or
        disconnected take no part in HA and are not examined.""",
    remediation="""Resolve the issue named (restore the management network, add a redundant
        management uplink, free failover resources), then Reconfigure for vSphere HA on the
        hosts whose agent is not master or connected to the master.""",
    references=REFERENCES["HA-09"],
)(agent_health)


_RESPONSE_MEANING = {
    "none": (
        "leave powered on: an isolated host keeps the VM running and its GPU held, and HA "
        "cannot restart it elsewhere while it holds its files, even when its network is gone"
    ),
    "powerOff": (
        "power off and restart: the VM stops at once, frees its GPU and files, and HA "
        "restarts it on a host with a free GPU"
    ),
    "shutdown": (
        "shut down and restart: the guest shuts down (powered off after 300 s), frees its "
        "GPU and files, and HA restarts it on a host with a free GPU"
    ),
}


def isolation_response(ctx: Context, vm: Vm) -> Outcome | None:
    name = ctx.facts.vm_cluster(vm)
    cluster = ctx.facts.clusters.get(name or "")
    if cluster is None or not _ha_watches(cluster) or cluster.isolation_response is None:
        return None
    if ctx.facts.restart_priority(vm) == "disabled":
        return None  # no isolation response is made; HA-07 reports it
    if any(a.kind == "passthrough" for a in vm.gpus):
        return None  # bound to this host's GPU, it restarts nowhere else (HA-04)
    override = cluster.isolation_response_overrides.get(vm.name)
    response = override or cluster.isolation_response
    source = "VM override" if override else "cluster default"
    meaning = _RESPONSE_MEANING.get(response, "an isolation response gpuaudit does not know")
    evidence = {
        "isolation_response": response,
        "source": source,
        "cluster_default": cluster.isolation_response,
    }
    return Outcome(response in RELEASING_RESPONSES, f"{response} ({source}): {meaning}", evidence)


rule(
    id="HA-10",
    title="A GPU VM is left powered on when its host is isolated",
    category="ha",
    severity="medium",
    scope=scopes.GPU_VMS,
    rationale="""The host isolation response decides what HA does to the VMs of a host that
        has lost its management network but still runs. "Leave powered on" (none, the
        default) keeps the VM running and its GPU held: if the VM's network went with the
        management network, the GPU workload is unreachable, yet HA cannot restart it on
        another host while the isolated host holds its files. "Power off and restart" frees
        the GPU and the files at once so HA restarts the VM on a host with a free matching
        GPU; "Shut down and restart" does the same after a clean guest shutdown (VMware Tools
        needed; powered off after 300 s). A per-VM override of a GPU VM counts over the
        cluster's default. A VM whose restart priority is disabled gets no isolation
        response (HA-07), and a VM with a fixed DirectPath GPU restarts on no other host
        (HA-04): powering it off would only stop it, so neither is examined.""",
    remediation="""Set the cluster's host isolation response (vSphere Availability > Failures
        and responses > Response for host isolation) to "Power off and restart VMs", or
        "Shut down and restart VMs" for guests with VMware Tools; or override it for the
        GPU VMs. Keep "leave powered on" only where the VM and storage networks are
        separate from the management network, and waive the rule for those VMs.""",
    references=REFERENCES["HA-10"],
)(isolation_response)


def _san_datastores(ctx: Context, cluster: Cluster) -> list[Datastore]:
    names = {ds for vm in ctx.facts.cluster_gpu_vms(cluster.name) for ds in vm.datastores}
    found = (ctx.facts.datastores.get(n) for n in sorted(names))
    return [d for d in found if d is not None and d.transport in SAN_TRANSPORTS]


def storage_protection(ctx: Context, cluster: Cluster) -> Outcome | None:
    if not _ha_watches(cluster) or cluster.vmcp_enabled is None:
        return None
    san = _san_datastores(ctx, cluster)
    if not san:
        return None  # no GPU VM on SAN storage
    apd, pdl = cluster.vmcp_apd, cluster.vmcp_pdl
    evidence = {
        "vmcp_enabled": cluster.vmcp_enabled,
        "apd_response": apd,
        "pdl_response": pdl,
        "san_datastores": [d.name for d in san],
    }
    where = f"GPU VMs on {', '.join(d.name for d in san)}"
    if not cluster.vmcp_enabled:
        return Outcome(
            False,
            f"VM Component Protection is off: {where} hang with their GPUs held after an "
            "APD or PDL instead of restarting elsewhere",
            evidence,
        )
    gaps = []
    if pdl not in PDL_RESTARTS:
        gaps.append(f"PDL response is {pdl}")
    if apd not in APD_RESTARTS:
        gaps.append(f"APD response is {apd}")
    if gaps:
        message = f"{'; '.join(gaps)}: {where} are not restarted after a storage loss"
    else:
        message = f"PDL {pdl}, APD {apd}: {where} are restarted after a storage loss"
    return Outcome(not gaps, message, evidence)


rule(
    id="HA-11",
    title="HA does not restart GPU VMs whose SAN datastore is lost (APD/PDL)",
    category="ha",
    severity="medium",
    scope=scopes.CLUSTERS_WITH_GPU_VMS,
    rationale="""A host can lose its paths to a SAN datastore while it keeps running: a
        permanent device loss (PDL) or all paths down (APD). Host monitoring sees no failure,
        so without VM Component Protection the GPU VMs on that datastore hang with their GPUs
        held. With it, HA powers them off and restarts them on a host that still reaches the
        datastore: PDL answered by "power off and restart VMs" (restartAggressive), APD by a
        conservative or aggressive restart. Examined on clusters whose GPU VMs keep files on
        FC, FCoE or iSCSI datastores.""",
    remediation="""Enable "Protect against storage connectivity loss" on the cluster (vSphere
        Availability > Failures and responses), with "Datastore with PDL: power off and
        restart VMs" and "Datastore with APD: power off and restart VMs (conservative or
        aggressive)".""",
    references=REFERENCES["HA-11"],
)(storage_protection)


def _heartbeat_candidates(ctx: Context, cluster: Cluster) -> list[str]:
    """The datastores vCenter may pick for heartbeating: the user's list when the policy
    allows no other, else every datastore two hosts of the cluster share (not vSAN)."""
    if cluster.heartbeat_policy == "userSelectedDs":
        return list(cluster.heartbeat_datastores)
    return [
        d.name
        for d in ctx.facts.cluster_datastores(cluster.name)
        if not _is_vsan(d) and ctx.facts.shared_in_cluster(d.name, cluster.name)
    ]


def _is_vsan(datastore: Datastore) -> bool:
    return datastore.type.lower() == "vsan"


def _only_vsan_shared(ctx: Context, cluster: Cluster) -> list[str]:
    """The cluster's shared datastores when every one of them is vSAN, else []."""
    shared = [
        d
        for d in ctx.facts.cluster_datastores(cluster.name)
        if ctx.facts.shared_in_cluster(d.name, cluster.name)
    ]
    return [d.name for d in shared] if shared and all(_is_vsan(d) for d in shared) else []


def wanted_per_host(cluster: Cluster) -> tuple[int | None, str]:
    """How many heartbeat datastores vCenter selects per host, and why: the default 2, or
    das.heartbeatdsperhost when it is 2 to 5; None for another value, whose effect no
    VMware document gives."""
    value = cluster.ha_option(HEARTBEAT_PER_HOST)
    if value is None:
        return HEARTBEAT_DATASTORES, f"the default of {HEARTBEAT_PER_HOST}"
    text = value.strip()
    if text.isdigit() and HEARTBEAT_DATASTORES <= int(text) <= MAX_HEARTBEAT_DATASTORES:
        return int(text), f"{HEARTBEAT_PER_HOST} = {text}"
    return None, f"{HEARTBEAT_PER_HOST} = {value!r}, outside the valid 2 to 5"


def heartbeat_datastores(ctx: Context, cluster: Cluster) -> Outcome | None:
    if not _ha_watches(cluster) or cluster.heartbeat_policy is None:
        return None
    wanted, wanted_from = wanted_per_host(cluster)
    silenced = (cluster.ha_option(IGNORE_INSUFFICIENT) or "").strip().lower() == "true"
    candidates = _heartbeat_candidates(ctx, cluster)
    evidence: dict[str, object] = {
        "policy": cluster.heartbeat_policy,
        "preferred": cluster.heartbeat_datastores,
        "candidates": candidates,
        "wanted_per_host": wanted,
        "wanted_from": wanted_from,
        "ignore_insufficient": silenced,
    }
    vsan = _only_vsan_shared(ctx, cluster)
    if vsan:
        evidence["vsan_only"] = vsan
        message = (
            f"the only shared datastores are vSAN ({', '.join(vsan)}): HA's agents talk over "
            "the vSAN network, and datastore heartbeats are not relevant"
        )
        return Outcome(True, message, evidence)
    counts = {
        h.name: sum(1 for c in candidates if ctx.facts.can_access(h.name, c))
        for h in ctx.facts.active_hosts(cluster.name)
    }
    # Fewer than the default is short whatever the option; with an option whose effect is
    # unknown, a count from 2 to 4 may or may not be short.
    short = {n: k for n, k in counts.items() if k < (wanted or HEARTBEAT_DATASTORES)}
    unsure = {n: k for n, k in counts.items() if wanted is None and n not in short}
    unsure = {n: k for n, k in unsure.items() if k < MAX_HEARTBEAT_DATASTORES}
    evidence["short_hosts"] = short
    silenced_note = (
        f"; {IGNORE_INSUFFICIENT} is true: it silences vCenter's warning, not the risk"
        if silenced
        else ""
    )
    if cluster.heartbeat_policy == "userSelectedDs" and not candidates:
        message = "the policy allows only user-selected heartbeat datastores and none is listed"
        return Outcome(False, message + silenced_note, evidence)
    if short:
        listed = ", ".join(f"{n} ({k})" for n, k in short.items())
        want = wanted or HEARTBEAT_DATASTORES
        message = f"fewer than {want} heartbeat datastores ({wanted_from}) on {listed}"
        return Outcome(False, message + silenced_note, evidence)
    if unsure:
        listed = ", ".join(f"{n} ({k})" for n, k in unsure.items())
        reason = f"{wanted_from}: how many heartbeat datastores vCenter wants is not known"
        return not_proven(f"{listed} heartbeat datastores; {reason}", reason, evidence)
    message = (
        f"every host has at least {wanted or MAX_HEARTBEAT_DATASTORES} heartbeat datastores "
        f"({wanted_from}; {cluster.heartbeat_policy}: {', '.join(candidates)})"
    )
    return Outcome(True, message, evidence)


rule(
    id="HA-12",
    title="A host of a GPU cluster has fewer heartbeat datastores than vSphere HA selects",
    category="ha",
    severity="medium",
    scope=scopes.CLUSTERS_WITH_GPU_VMS,
    rationale="""When the HA master loses a host's network heartbeats, it reads the host's
        datastore heartbeats to tell a failed host (restart its VMs) from an isolated or
        partitioned one (leave them). vCenter picks heartbeat datastores per host from the
        datastores that two or more hosts share (vSAN datastores are never used), or only
        from the user's list under the "user selected" policy: two by default, or the
        number the HA advanced option das.heartbeatdsperhost sets (at most five; another
        value is not documented, and then only fewer than two fails and up to four is not
        proven). With fewer, one storage fault makes HA take a live host for dead and
        restart GPU VMs that are still running, or hesitate over a dead one. The option
        das.ignoreInsufficientHbDatastore silences vCenter's warning about it, not the
        risk: the finding names it. Where the only shared datastores are vSAN, HA's agents
        talk over the vSAN network and datastore heartbeats are not relevant (VMware vCAT):
        the cluster passes.""",
    remediation="""Share at least as many datastores as das.heartbeatdsperhost asks (two by
        default; not vSAN, ideally on different arrays) with every host of the cluster,
        and let vCenter choose among them ("use datastores from the specified list and
        complement automatically") or list enough.""",
    references=REFERENCES["HA-12"],
)(heartbeat_datastores)


def _policy_text(cluster: Cluster) -> str:
    ac = cluster.admission_control
    if ac.policy == "percent":
        return f"cluster resource percentage, {ac.cpu_percent}% CPU and {ac.memory_percent}% memory"
    if ac.policy == "slots":
        return f"slot policy, {ac.failover_level} host failure(s)"
    if ac.policy == "dedicated-hosts":
        return f"dedicated failover hosts {', '.join(ac.failover_hosts)}"
    return ac.policy or "policy unknown"


def admission_ignores_gpus(ctx: Context, cluster: Cluster) -> Outcome | None:
    ac = cluster.admission_control
    simulated = ctx.simulations.get(cluster.name)
    if not _ha_watches(cluster) or not ac.enabled or simulated is None:
        return None
    sim = simulated.simulation
    if not sim.gpu_vms:
        return None
    evidence = {
        "admission_control": ac.enabled,
        "policy": ac.policy,
        "gpu_tolerates": sim.tolerates,
        "worst_host": sim.worst_host,
    }
    policy = f"admission control is on ({_policy_text(cluster)}) but counts CPU and memory only"
    if sim.tolerates >= 1:
        message = f"{policy}; the host-failure simulation finds GPU room for N+{sim.tolerates}"
    elif (sim.tolerates_unproven or 0) >= 1:
        # Only figures NVIDIA does not publish stand between the cluster and N+1 (HA-08).
        message = (
            f"{policy}; GPU room for N+1 is not proven: the simulation proves "
            f"N+{sim.tolerates}, up to N+{sim.tolerates_unproven} only if facts NVIDIA does "
            "not publish allow it"
        )
        return not_proven(message, "; ".join(sim.not_proven), evidence)
    else:
        message = (
            f"{policy}: it does not protect GPU capacity, and the loss of {sim.worst_host} "
            "leaves GPU VMs with nowhere to restart (N+0)"
        )
    return Outcome(sim.tolerates >= 1, message, evidence)


rule(
    id="HA-13",
    title="HA admission control is on but ignores GPUs: GPU failover capacity is not reserved",
    category="ha",
    severity="low",
    scope=scopes.CLUSTERS_WITH_GPU_VMS,
    rationale="""HA admission control reserves CPU and memory for failover, never GPUs: a
        cluster can pass admission control with every GPU allocated, and power-ons that take
        the last free GPU are never refused. What protects GPU capacity is the host-failure
        simulation (HA-05, HA-08). This rule states the admission control policy and fails
        when admission control is on yet the simulation finds that the loss of a host leaves
        GPU VMs with nowhere to restart, so that no one takes the first for the second.
        Clusters with admission control off are reported by HA-02.""",
    remediation="""Keep admission control for CPU and memory, and size GPU capacity for N+1
        separately: see the worst host's unplaced VMs in the simulation (HA-08).""",
    references=REFERENCES["HA-13"],
)(admission_ignores_gpus)
