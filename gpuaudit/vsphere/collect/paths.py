"""The property paths the collector reads, per managed object type.

Only what the checks and reports use: never whole ``config`` objects. Each path
in SPECS is read for every object of its type in the same RetrievePropertiesEx.
A VM's device list, the largest property of all, is read in a second retrieval,
only for the VMs that may hold a GPU (gpuaudit.vsphere.collect.vms.needs_devices).
"""

from __future__ import annotations

from pyVmomi import VmomiSupport, vim

HOST_PATHS = (
    "name",
    "parent",
    "summary.config.product",
    "summary.hardware",
    "runtime.connectionState",
    "runtime.inMaintenanceMode",
    "runtime.dasHostState",
    "hardware.pciDevice",
    "hardware.biosInfo",
    "config.pciPassthruInfo",
    "config.graphicsInfo",
    "config.graphicsConfig",
    "config.sharedPassthruGpuTypes",
    "config.sharedGpuCapabilities",
    "config.virtualNicManagerInfo.netConfig",
    "config.network.vnic",
    "config.network.pnic",
    "config.network.vswitch",
    "config.network.portgroup",
    "config.network.proxySwitch",
    "config.storageDevice.hostBusAdapter",
    "config.storageDevice.scsiLun",
    "config.storageDevice.multipathInfo",
    "configIssue",
    "summary.maxEVCModeKey",
)

VM_PATHS = (
    "name",
    "runtime.host",
    "runtime.powerState",
    "config.template",
    "config.hardware.memoryMB",
    "config.memoryReservationLockedToMax",
    "resourceConfig.memoryAllocation.reservation",
    "datastore",
    "config.firmware",
    "runtime.minRequiredEVCModeKey",
    "config.uuid",
    "config.instanceUuid",
)

# The first path is the device list. extraConfig (for the 64-bit MMIO options of
# large-BAR GPUs, and the vGPU plugin parameters that disable migration) cannot be
# narrowed to a few keys in a property path, so it is read here, for the few VMs that
# may hold a GPU, rather than for every VM.
VM_DEVICE_PATHS = ("config.hardware.device", "config.extraConfig")
# The vendor device groups a VM uses (API 8.0.0.1), read with its devices where the
# negotiated API has them: an older server refuses a path it does not know, and its VMs
# can use no device group.
VM_DEVICE_GROUPS_PATH = "config.deviceGroups"
DEVICE_GROUPS_API = "vim.version.v8_0_0_1"


def device_paths(negotiated: str) -> tuple[str, ...]:
    """The paths of the device retrieval for the negotiated API version."""
    if VmomiSupport.IsChildVersion(negotiated, DEVICE_GROUPS_API):
        return (*VM_DEVICE_PATHS, VM_DEVICE_GROUPS_PATH)
    return VM_DEVICE_PATHS


# summary is read whole: ClusterComputeResource.summary is declared as
# ComputeResourceSummary, so vCenter refuses "summary.currentEVCModeKey".
# environmentBrowser is the reference to ask for vCenter's description of the vGPU
# profiles and its stun time estimates (collect/configtarget.py).
CLUSTER_PATHS = (
    "name",
    "parent",
    "configurationEx",
    "configIssue",
    "summary",
    "environmentBrowser",
)

DATASTORE_PATHS = ("name", "parent", "summary", "host", "info")

PARENT_PATHS = ("name", "parent")

SPECS: dict[type, tuple[str, ...]] = {
    vim.Folder: PARENT_PATHS,
    vim.Datacenter: PARENT_PATHS,
    vim.ComputeResource: PARENT_PATHS,
    vim.ClusterComputeResource: CLUSTER_PATHS,
    vim.HostSystem: HOST_PATHS,
    vim.VirtualMachine: VM_PATHS,
    vim.Datastore: DATASTORE_PATHS,
}

# Every path of both retrievals, as one retrieval of every object would ask for them.
EVERY_PATH: dict[type, tuple[str, ...]] = {
    **SPECS,
    vim.VirtualMachine: (*VM_PATHS, *VM_DEVICE_PATHS, VM_DEVICE_GROUPS_PATH),
}

# Fields that only a newer API version carries: when the negotiated version is
# older, the serializer drops them silently, so the inventory records a gap.
VERSIONED_FIELDS = {
    "config.graphicsInfo.vgpuMode": "vim.version.v8_0_3_0",
    "config.hardware.device.backing.migrateSupported": "vim.version.v7_0_2_0",
    "config.sharedGpuCapabilities": "vim.version.version12",
}
