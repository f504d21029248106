"""The inventory: plain data that describes one vCenter or ESXi host.

Only the collector builds an inventory from pyVmomi objects. Everything after it
(checks, the failover simulation, reports) reads these dataclasses, so it can be
tested without a server and re-run offline on a saved inventory.

The JSON form is versioned by ``SCHEMA_VERSION``; ``docs/inventory-schema.md``
documents it. A loader refuses a document from a newer schema rather than
guessing at fields it does not know.
"""

from __future__ import annotations

import builtins
import dataclasses
import json
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

SCHEMA_VERSION = 2

T = TypeVar("T")

HOST_AGENT = "HostAgent"  # about.apiType of a standalone ESXi host (a vCenter's: VirtualCenter)


@dataclass
class VCenter:
    """What the server says about itself, and the vCenter-wide GPU settings."""

    name: str = ""
    product: str = ""
    version: str = ""
    build: str = ""
    api_version: str = ""
    api_type: str = ""  # "VirtualCenter" or "HostAgent" (a standalone ESXi host)
    instance_uuid: str = ""
    # vgpu.hotmigrate.enabled: None when the setting could not be read, and on a
    # standalone ESXi host, which has no such setting.
    vgpu_hotmigrate_enabled: bool | None = None

    @property
    def standalone_esxi(self) -> bool:
        """The server is one ESXi host, not a vCenter: it has no vMotion, no vSphere HA."""
        return self.api_type == HOST_AGENT


@dataclass
class AdmissionControl:
    enabled: bool = False
    # "slots" (FailoverLevel), "percent" (FailoverResources),
    # "dedicated-hosts" (FailoverHost), "other" or None when unset.
    policy: str | None = None
    failover_level: int | None = None
    cpu_percent: int | None = None
    memory_percent: int | None = None
    failover_hosts: list[str] = field(default_factory=list)


@dataclass
class ConfigIssue:
    """One entry of a cluster's or host's ``configIssue``: an event vCenter keeps open."""

    kind: str  # the event's type, e.g. HostNoRedundantManagementNetworkEvent; EventEx: its id
    message: str = ""  # fullFormattedMessage


@dataclass
class VmHostRule:
    """A DRS VM-Host rule (ClusterVmHostRuleInfo), its groups resolved to names."""

    name: str
    enabled: bool = True
    mandatory: bool = False  # a "must" rule; otherwise "should"
    affine: bool = True  # must/should run on the hosts; False: must/should not
    vm_group: str = ""
    host_group: str = ""
    vms: list[str] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)


@dataclass
class VmVmRule:
    """A DRS VM-VM rule: keep the VMs together (affinity) or apart (anti-affinity)."""

    name: str
    enabled: bool = True
    affinity: bool = False  # True: ClusterAffinityRuleSpec; False: ClusterAntiAffinityRuleSpec
    mandatory: bool = False
    vms: list[str] = field(default_factory=list)


@dataclass
class Cluster:
    name: str
    moref: str
    datacenter: str = ""
    ha_enabled: bool = False
    ha_host_monitoring: bool = False
    admission_control: AdmissionControl = field(default_factory=AdmissionControl)
    default_restart_priority: str = "medium"
    drs_enabled: bool = False
    drs_automation: str | None = None
    # VM name -> restart priority override (disabled, lowest ... highest).
    restart_priority_overrides: dict[str, str] = field(default_factory=dict)
    # DRS advanced options (configurationEx.drsConfig.option): key -> value as set.
    drs_options: dict[str, str] = field(default_factory=dict)
    # vSphere HA responses and health (configurationEx.dasConfig, configIssue); None: not read.
    isolation_response: str | None = None  # none / powerOff / shutdown
    # VM name -> isolation response override (none / powerOff / shutdown).
    isolation_response_overrides: dict[str, str] = field(default_factory=dict)
    vmcp_enabled: bool | None = None  # VM Component Protection (vmComponentProtecting)
    vmcp_apd: str | None = None  # disabled / warning / restartConservative / restartAggressive
    vmcp_pdl: str | None = None  # disabled / warning / restartAggressive
    # userSelectedDs / allFeasibleDs / allFeasibleDsWithUserPreference
    heartbeat_policy: str | None = None
    heartbeat_datastores: list[str] = field(default_factory=list)  # the user's preference
    config_issues: list[ConfigIssue] = field(default_factory=list)
    # summary.currentEVCModeKey: the cluster's EVC baseline; None when EVC is off.
    evc_mode: str | None = None
    # DRS rules (configurationEx.rule with configurationEx.group), VMs and hosts by name.
    vm_host_rules: list[VmHostRule] = field(default_factory=list)
    vm_vm_rules: list[VmVmRule] = field(default_factory=list)
    # vSphere HA advanced options (configurationEx.dasConfig.option): key -> value as set.
    ha_options: dict[str, str] = field(default_factory=dict)

    def ha_option(self, key: str) -> str | None:
        """An HA advanced option's value as set, its name matched in any case (vSphere's
        documents spell das.heartbeatdsperhost and das.heartbeatDsPerHost alike)."""
        wanted = key.lower()
        return next((v for k, v in self.ha_options.items() if k.lower() == wanted), None)


@dataclass
class CounterStats:
    """One GPU performance counter summarised over the telemetry window."""

    average: float | None = None
    peak: float | None = None  # the highest sample (each sample is an interval's average)
    samples: int = 0


@dataclass
class GpuTelemetry:
    """A GPU's performance counters over the window (PerformanceManager, group ``gpu``)."""

    instance: str = ""  # the counter instance the host reported for this GPU
    # How the instance was matched to the GPU: "pci" (the instance names its PCI
    # address), "order" (gpuN, the Nth GPU by PCI address) or "only" (the host's
    # one GPU and one instance).
    matched_by: str = ""
    utilization_percent: CounterStats | None = None
    memory_used_mb: CounterStats | None = None
    memory_usage_percent: CounterStats | None = None
    temperature_c: CounterStats | None = None
    power_w: CounterStats | None = None
    # Utilisation over the window, oldest first, in at most 48 equal buckets (each
    # the mean of its samples, null where a bucket has none): the report's sparkline.
    trend: list[float | None] = field(default_factory=list)


@dataclass
class Gpu:
    """A display-class PCI device of a GPU vendor on one host."""

    pci_id: str
    vendor_id: int
    device_id: int
    sub_vendor_id: int = 0
    sub_device_id: int = 0
    vendor_name: str = ""
    device_name: str = ""  # as the host reports it
    model: str = ""  # from the catalogue, or device_name for an unknown id
    known_model: bool = False
    memory_mb: int = 0  # frame buffer
    passthrough_capable: bool = False
    passthrough_enabled: bool = False
    passthrough_active: bool = False
    # basic / shared / direct / sharedDirect; None when the host has no
    # graphicsInfo entry for the device.
    graphics_type: str | None = None
    vgpu_mode: str | None = None  # none / sameSize / mixedSize / multiInstanceGpu
    vms: list[str] = field(default_factory=list)  # VM names using the device
    telemetry: GpuTelemetry | None = None  # None when the host reported no counter for it
    # The device's own graphics type in the host's graphics configuration
    # (shared / sharedDirect), which overrides the host default; None when the
    # device has no setting of its own.
    configured_graphics_type: str | None = None
    # SR-IOV (config.pciPassthruInfo as HostSriovInfo); all None when the host reports
    # no SR-IOV for the device.
    sriov_capable: bool | None = None
    sriov_enabled: bool | None = None
    sriov_active: bool | None = None
    sriov_vfs: int | None = None  # virtual functions in use (numVirtualFunction)
    # config.pciPassthruInfo[].hardwareLabel (vSphere 8.0): the label Dynamic DirectPath
    # devices may ask for; "" when the host sets none.
    hardware_label: str = ""
    # The PCI ids of the GPU's SR-IOV virtual functions that the host lists among its
    # PCI devices (subsystem device 0x0000; collect/functions.py), in the host's order.
    virtual_functions: list[str] = field(default_factory=list)


@dataclass
class ProfileCapacity:
    """vCenter's count of one vGPU profile on one host (DirectPathProfileManager.QueryCapacity,
    vSphere 9.0), in the API's units: read as vGPUs of the profile (the API reference
    does not define a unit further).

    ``max`` is the host's theoretical capacity with no VM running; ``consumed`` the units
    the powered-on VMs hold; ``remaining`` the units not yet assigned to any powered-on VM;
    ``unused_reservation`` the units reserved but not yet assigned. vCenter keeps
    max >= consumed + remaining + unused_reservation.
    """

    max: int  # DirectPathProfileManagerCapacityInfo.max
    consumed: int
    remaining: int
    unused_reservation: int  # unusedReservation


@dataclass
class VgpuProfile:
    name: str
    migrate_supported: bool | None = None
    suspend_supported: bool | None = None
    # vCenter's description of the profile (ConfigTarget.vgpuProfileInfo, API 7.0.3.0),
    # from the host named by Host.vgpu_profile_info_host; None where vCenter gave none.
    frame_buffer_gib: int | None = None  # fbSizeInGib; 0 is kept as None
    sharing: str | None = None  # profileSharing: timeSliced / mig
    profile_class: str | None = None  # profileClass: compute / quadro
    # deviceVendorId: the PCI vendor id in the low 16 bits, the device id in the next 16.
    device_vendor_id: int | None = None
    # vCenter's capacity of the profile on this host (vSphere 9.0); None when not asked,
    # or when vCenter could not say (a gap then says why).
    capacity: ProfileCapacity | None = None


@dataclass
class StunEstimate:
    """vCenter's estimate of a vGPU profile's vMotion stun time at one migration bandwidth."""

    bandwidth_mbps: int  # VirtualMachineVMotionStunTimeInfo.migrationBW
    stun_s: int  # stunTime


@dataclass
class DeviceGroupComponent:
    """One device of a vendor device group a host offers
    (VirtualMachineVendorDeviceGroupInfoComponentDeviceInfo)."""

    type: str  # pciPassthru, nvidiaVgpu, sriovNic or dvx, as vCenter sends it
    vendor: str = ""  # vendorName
    device: str = ""  # deviceName
    configurable: bool = False  # isConfigurable
    # nvidiaVgpu: the vGPU profile its device template's VmiopBackingInfo names; else None.
    vgpu_profile: str | None = None


@dataclass
class VendorDeviceGroup:
    """A vendor device group a host offers (ConfigTarget.vendorDeviceGroupInfo, API
    8.0.0.1): devices that "must be allocated to a virtual machine as a unit", typically
    because "a physical link connects the devices" (NVLink-connected GPUs)."""

    name: str  # deviceGroupName
    description: str = ""  # deviceGroupDescription
    components: list[DeviceGroupComponent] = field(default_factory=list)


@dataclass
class StorageAdapter:
    device: str  # vmhbaN
    kind: str  # fc, fcoe, iscsi, sas, block, pscsi, pcie, rdma, tcp, other
    key: str = ""
    model: str = ""
    driver: str = ""
    status: str = ""
    port_wwn: str | None = None
    node_wwn: str | None = None
    iscsi_software: bool | None = None


@dataclass
class VmotionNic:
    device: str  # vmkN
    ip: str = ""
    portgroup: str = ""
    uplink_speed_mbps: int | None = None  # slowest connected uplink of its switch
    switch: str = ""  # its standard switch or distributed switch; "" when not found
    distributed: bool = False  # on a distributed switch's port


@dataclass
class HostTelemetry:
    """What a host answered for its GPU counters."""

    # "reported": values for at least one GPU; "none": no GPU counter values;
    # "error": the query failed.
    status: str = "none"
    reason: str = ""  # why there are none, when known
    instances: list[str] = field(default_factory=list)  # GPU instances that had values
    unmatched: list[str] = field(default_factory=list)  # instances no GPU of the host matched


@dataclass
class Licence:
    """A vSphere licence as LicenseManager describes it. The key itself is never kept."""

    edition_key: str = ""  # e.g. esx.enterprisePlus.cpuPackageCoreLimited, eval
    name: str = ""
    key_tail: str = ""  # the last group of the licence key, to tell keys apart
    expires: str | None = None  # YYYY-MM-DD; None when it does not expire
    evaluation: bool = False
    features: dict[str, str] = field(default_factory=dict)  # feature key -> name


@dataclass
class Host:
    name: str
    moref: str
    datacenter: str = ""
    cluster: str | None = None  # None for a standalone host
    version: str = ""
    build: str = ""
    vendor: str = ""
    model: str = ""
    connection_state: str = "connected"
    in_maintenance: bool = False
    cpu_cores: int = 0
    cpu_mhz: int = 0
    memory_mb: int = 0
    gpus: list[Gpu] = field(default_factory=list)
    vgpu_profiles: list[VgpuProfile] = field(default_factory=list)
    default_graphics_type: str | None = None
    assignment_policy: str | None = None
    vmotion_nics: list[VmotionNic] = field(default_factory=list)
    adapters: list[StorageAdapter] = field(default_factory=list)
    telemetry: HostTelemetry | None = None  # None when GPU counters were not queried
    licence: Licence | None = None  # the assigned vSphere licence, when read
    # The NVIDIA vGPU manager version (e.g. 535.161.05), when known: the Read-only
    # role cannot read installed software, so the collector leaves it unset.
    vgpu_manager_version: str | None = None
    # runtime.dasHostState.state (master, connectedToMaster, networkIsolated, ...);
    # "" when the host reports none, None when it was not read.
    ha_state: str | None = None
    config_issues: list[ConfigIssue] = field(default_factory=list)
    # summary.maxEVCModeKey: the newest EVC baseline its CPUs offer; None when unknown.
    max_evc_mode: str | None = None
    # hardware.biosInfo: the system BIOS version and its release date (YYYY-MM-DD);
    # None when not read.
    bios_version: str | None = None
    bios_release_date: str | None = None
    # vCenter's vMotion stun time estimates (vgpuProfileInfo[].stunTimeEstimates of
    # QueryConfigTarget, 8.0 U2), profile -> points by bandwidth, read from host
    # stun_estimates_host, which runs the same ESXi build and GPU model in the same
    # cluster; {} and None when vCenter was not asked or gave none.
    stun_estimates: dict[str, list[StunEstimate]] = field(default_factory=dict)
    stun_estimates_host: str | None = None
    # The host of the same cluster, ESXi build and GPU models whose QueryConfigTarget
    # answer gave vgpu_profiles their frame_buffer_gib, sharing, profile_class and
    # device_vendor_id; None when vCenter was not asked or listed no profile.
    vgpu_profile_info_host: str | None = None
    # Profiles vCenter's vgpuProfileInfo lists for this host (it is the host asked) that
    # its config.sharedPassthruGpuTypes does not: with vCenter's description, kept apart
    # from vgpu_profiles, which stays what the host offers.
    unlisted_vgpu_profiles: list[VgpuProfile] = field(default_factory=list)
    # The vendor device groups vCenter says the host offers (vendorDeviceGroupInfo of the
    # QueryConfigTarget answer about device_groups_host, API 8.0.0.1): [] when it lists
    # none; None when not read (vCenter not asked, an older API, or no answer).
    device_groups: list[VendorDeviceGroup] | None = None
    device_groups_host: str | None = None
    # Virtual functions among the host's PCI devices that no single physical GPU on
    # their PCI bus takes (collect/functions.py).
    unattached_virtual_functions: list[str] = field(default_factory=list)

    @property
    def connected(self) -> bool:
        return self.connection_state == "connected"


@dataclass
class LunPath:
    adapter: str  # vmhbaN
    adapter_kind: str  # as StorageAdapter.kind
    state: str = "active"  # active, standby, disabled, dead, unknown


@dataclass
class DatastoreMount:
    host: str
    mounted: bool = True
    accessible: bool = True
    # Paths from this host to the datastore's LUNs (VMFS only).
    paths: list[LunPath] = field(default_factory=list)


@dataclass
class Datastore:
    name: str
    moref: str
    datacenter: str = ""
    type: str = ""  # VMFS, NFS, NFS41, vsan, VVOL, ...
    capacity_mb: int = 0
    free_mb: int = 0
    multiple_host_access: bool | None = None
    local: bool | None = None  # info.vmfs.local
    luns: list[str] = field(default_factory=list)  # extent canonical names
    # fc, iscsi, fcoe, sas, local, nfs, vsan, vvol, mixed, other
    transport: str = "other"
    mounts: list[DatastoreMount] = field(default_factory=list)


@dataclass
class GpuAttachment:
    """One GPU device of a VM."""

    kind: str  # "vgpu", "passthrough" (fixed DirectPath) or "dynamic"
    label: str = ""
    profile: str | None = None  # vGPU profile
    migrate_supported: bool | None = None  # vGPU backing; None when not reported
    pci_id: str | None = None  # fixed: the bound host device; dynamic: assignedId
    vendor_id: int | None = None  # fixed passthrough
    device_id: int | None = None
    # Dynamic DirectPath: allowed (vendor_id, device_id) pairs.
    allowed: list[tuple[int, int]] = field(default_factory=list)
    custom_label: str | None = None
    # Dynamic DirectPath: the (subVendorId, subDeviceId) of each entry of ``allowed``, in
    # its order; None where the entry gives no sub ids. Empty when none gives any.
    allowed_sub_ids: list[tuple[int, int] | None] = field(default_factory=list)
    # vgpuMigrateDataSizeMB of the vGPU backing (vSphere 8.0 U1 and later); None when absent.
    migrate_data_mb: int | None = None
    # The groupInstanceKey of the vendor device group the device belongs to (its
    # deviceGroupInfo, API 8.0.0.1; Vm.device_groups names it); None when in none.
    device_group: int | None = None


@dataclass
class VmDeviceGroup:
    """A vendor device group a VM uses (config.deviceGroups.deviceGroup[], API 8.0.0.1)."""

    name: str  # deviceGroupName; "" when a device names a group config.deviceGroups lacks
    key: int  # groupInstanceKey
    devices: int = 0  # the VM's devices whose deviceGroupInfo names the group, GPUs or not


@dataclass
class Vm:
    name: str
    moref: str
    host: str | None = None
    cluster: str | None = None
    datacenter: str = ""
    power_state: str = "poweredOff"
    memory_mb: int = 0
    memory_reservation_mb: int = 0
    memory_locked_to_max: bool = False
    datastores: list[str] = field(default_factory=list)
    restart_priority: str | None = None  # the override, or None for the default
    gpus: list[GpuAttachment] = field(default_factory=list)
    # Read with the devices, for the VMs that may hold a GPU; None when not read.
    firmware: str | None = None  # config.firmware: "bios" or "efi"
    # The pciPassthru.use64bitMMIO and pciPassthru.64bitMMIOSizeGB entries of
    # config.extraConfig, as set (only those keys are kept).
    mmio_options: dict[str, str] = field(default_factory=dict)
    # The NVIDIA vGPU plugin parameters of config.extraConfig that disable live migration
    # when 1: pciPassthru<N>.cfg.enable_uvm, .enable_debugging, .enable_profiling, as set.
    vgpu_plugin_options: dict[str, str] = field(default_factory=dict)
    # config.extraConfig's maintenance.vm.evacuation.poweroff as set (vSphere's
    # vm-operator sets "TRUE" on its GPU VMs: DRS powers the VM off for its host's
    # maintenance instead of moving it); None when unset or the devices were not read.
    evacuation_poweroff: str | None = None
    min_evc_mode: str | None = None  # runtime.minRequiredEVCModeKey
    # The join keys of other inventories (RVTools' "VM UUID"): empty when not read.
    bios_uuid: str = ""  # config.uuid
    instance_uuid: str = ""  # config.instanceUuid
    # The vendor device groups the VM uses, by groupInstanceKey; a GPU attachment's
    # device_group names its group. Read with the devices; [] when none or not read.
    device_groups: list[VmDeviceGroup] = field(default_factory=list)

    @property
    def powered_on(self) -> bool:
        return self.power_state == "poweredOn"


# The NVIDIA vGPU manager's version is in a host's installed software only:
# HostImageConfigManager.fetchSoftwarePackages, one call per host, which needs a privilege
# the Read-only role lacks (collect/software.py). Without it the collector records a Gap.
VGPU_MANAGER_CALL = "HostImageConfigManager.fetchSoftwarePackages"
VGPU_MANAGER_PRIVILEGE = "Host.Config.Image"


@dataclass
class Gap:
    """Something the collector could not read: the verdicts that need it are uncertain.

    A gap with a ``privilege`` is one the Read-only role cannot read by design: the
    server refused it for want of that privilege, and the rules that need it give no
    verdict, or one not proven where they judge other facts too (VM-06). Those gaps are
    reported but fail nothing (DATA-01 passes over them): an audit account is expected to
    hold the Read-only role, and a finding on every scan would teach people to ignore the
    rule.
    """

    object: str  # name, or moref when the name is unknown
    kind: str  # HostSystem, VirtualMachine, ...
    property: str
    reason: str  # e.g. NoPermission, notResponding, notInApiVersion
    moref: str = ""
    privilege: str = ""  # the vCenter privilege it needs beyond Read-only, if that is why

    @builtins.property  # the field above named "property" hides the builtin here
    def uncertain(self) -> bool:
        """True when the gap makes verdicts uncertain (it is not a known limit of the role)."""
        return not self.privilege


@dataclass
class Telemetry:
    """How GPU telemetry was read: the window, the interval and the counters resolved."""

    collected: bool = False  # False: not attempted (an inventory from before telemetry)
    window_hours: float = 0.0
    start: str = ""  # ISO 8601, the server's clock
    end: str = ""
    interval_s: int = 0  # 20 (real time) or a historical interval's sampling period
    statistics_level: int | None = None  # the historical interval's level
    # "gpu.<name>.<rollup>" -> counter id, as this vCenter numbers them.
    counters: dict[str, int] = field(default_factory=dict)
    # The per-device statistics level each counter needs for vCenter to keep it.
    counter_levels: dict[str, int] = field(default_factory=dict)
    missing_counters: list[str] = field(default_factory=list)
    queries: int = 0  # QueryPerf calls made
    # The server's limit on metrics in one QueryPerf (config.vpxd.stats.maxQueryMetrics,
    # or its default); None: no limit, or not asked.
    metrics_per_query: int | None = None
    note: str = ""  # a reason that holds for the whole vCenter


@dataclass
class Licensing:
    """The vSphere licences assigned to the vCenter and its hosts."""

    collected: bool = False
    vcenter: Licence | None = None
    note: str = ""


@dataclass
class Inventory:
    source: str = ""  # the server, with no credentials
    collected_at: str = ""  # ISO 8601, UTC
    vcenter: VCenter = field(default_factory=VCenter)
    datacenters: list[str] = field(default_factory=list)
    clusters: list[Cluster] = field(default_factory=list)
    hosts: list[Host] = field(default_factory=list)
    datastores: list[Datastore] = field(default_factory=list)
    vms: list[Vm] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)
    telemetry: Telemetry = field(default_factory=Telemetry)
    licensing: Licensing = field(default_factory=Licensing)
    schema_version: int = SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def to_json(self, indent: int | None = 1) -> str:
        return json.dumps(self.to_dict(), indent=indent, sort_keys=False, allow_nan=False)

    def save(self, path: str | Path) -> None:
        from gpuaudit.common.files import write_atomic

        write_atomic(Path(path), self.to_json().encode("utf-8"))

    @classmethod
    def from_dict(cls, data: Any) -> Inventory:
        if not isinstance(data, dict):
            raise InventoryError("an inventory is a JSON object")
        version = data.get("schema_version")
        if not isinstance(version, int) or isinstance(version, bool):
            raise InventoryError("schema_version is missing or not a whole number")
        if version > SCHEMA_VERSION:
            raise InventoryError(
                f"schema_version {version} is newer than this gpuaudit reads "
                f"({SCHEMA_VERSION}); upgrade gpuaudit"
            )
        return _build(cls, data, "inventory")

    @classmethod
    def from_json(cls, text: str) -> Inventory:
        try:
            data = json.loads(text, parse_constant=_no_constant)
        except json.JSONDecodeError as exc:
            raise InventoryError(f"line {exc.lineno}: not valid JSON: {exc.msg}") from None
        except RecursionError:
            raise InventoryError("not valid JSON: nested too deeply") from None
        except ValueError as exc:  # a number too long, NaN
            raise InventoryError(f"not valid JSON: {str(exc).split(':')[0]}") from None
        return cls.from_dict(data)

    @classmethod
    def load(cls, path: str | Path) -> Inventory:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InventoryError(f"cannot read: {exc}") from None
        return cls.from_json(text)

    # Lookups used by the checks and reports.
    def host(self, name: str) -> Host | None:
        return next((h for h in self.hosts if h.name == name), None)

    def cluster(self, name: str) -> Cluster | None:
        return next((c for c in self.clusters if c.name == name), None)

    def datastore(self, name: str) -> Datastore | None:
        return next((d for d in self.datastores if d.name == name), None)

    def hosts_in(self, cluster: str) -> list[Host]:
        return [h for h in self.hosts if h.cluster == cluster]

    def vms_in(self, cluster: str) -> list[Vm]:
        return [v for v in self.vms if v.cluster == cluster]


class InventoryError(ValueError):
    """An inventory document that cannot be loaded."""


def _no_constant(name: str) -> Any:
    """NaN and Infinity are not JSON, and no inventory field may hold them."""
    raise ValueError(f"{name} is not a JSON value")


def _build(cls: type[T], data: Any, where: str) -> T:
    """Build dataclass ``cls`` from JSON data, strictly: unknown keys and wrong types fail."""
    if not isinstance(data, dict):
        raise InventoryError(f"{where}: expected an object")
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(data) - names)
    if unknown:
        raise InventoryError(f"{where}: unknown field {unknown[0]!r}")
    kwargs = {}
    for name, value in data.items():
        kwargs[name] = _convert(hints[name], value, f"{where}.{name}")
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise InventoryError(f"{where}: {exc}") from None


def _convert(tp: Any, value: Any, where: str) -> Any:
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _convert(arg, value, where)
            except InventoryError as exc:
                errors.append(str(exc))
        raise InventoryError(errors[0] if errors else f"{where}: unexpected null")
    if origin is list:
        if not isinstance(value, list):
            raise InventoryError(f"{where}: expected a list")
        return [_convert(args[0], v, f"{where}[{i}]") for i, v in enumerate(value)]
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:  # tuple[X, ...]
        if not isinstance(value, (list, tuple)):
            raise InventoryError(f"{where}: expected a list")
        return tuple(_convert(args[0], v, f"{where}[{i}]") for i, v in enumerate(value))
    if origin is tuple:
        if not isinstance(value, (list, tuple)) or len(value) != len(args):
            raise InventoryError(f"{where}: expected a list of {len(args)} items")
        return tuple(_convert(a, v, where) for a, v in zip(args, value, strict=True))
    if origin is dict:
        if not isinstance(value, dict):
            raise InventoryError(f"{where}: expected an object")
        return {
            _convert(args[0], k, where): _convert(args[1], v, f"{where}.{k}")
            for k, v in value.items()
        }
    if origin is typing.Literal:
        if not any(type(value) is type(arg) and value == arg for arg in args):
            raise InventoryError(f"{where}: expected one of {', '.join(map(str, args))}")
        return value
    if dataclasses.is_dataclass(tp):
        return _build(tp, value, where)  # type: ignore[arg-type]
    if tp is bool:
        if not isinstance(value, bool):
            raise InventoryError(f"{where}: expected true or false")
        return value
    if tp is int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise InventoryError(f"{where}: expected a whole number")
        return value
    if tp is float:
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise InventoryError(f"{where}: expected a number")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise InventoryError(f"{where}: expected a string")
        return value
    if tp is Any:
        return value
    raise InventoryError(f"{where}: unsupported type {tp!r}")
