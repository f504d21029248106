"""The published sources the rules cite: VMware/Broadcom and NVIDIA documentation.

Each rule names its sources in ``rule(references=...)``. A source is declared
once here, with the title of the page (and the release it documents where the
page belongs to one), so that the rules citing it share one spelling and one URL.
"""

from __future__ import annotations

from gpuaudit.results import Reference

_VSPHERE = "https://docs.vmware.com/en/VMware-vSphere"

# --- vSphere Availability -----------------------------------------------------------------

HA_HOW_IT_WORKS = Reference(
    "vSphere Availability 8.0: How vSphere HA Works",
    f"{_VSPHERE}/8.0/vsphere-availability/GUID-33A65FF7-DA22-4DC5-8B18-5A7F97CCA536.html",
)
HA_CLUSTER = Reference(
    "vSphere Availability 8.0: Creating and Configuring a vSphere HA Cluster",
    f"{_VSPHERE}/8.0/vsphere-availability/GUID-E90B8A4A-BAE1-4094-8D92-8C5570FE5D8C.html",
)
HA_VM_RESPONSES = Reference(
    "vSphere Availability 8.0: VM restart priority and host isolation response",
    f"{_VSPHERE}/8.0/vsphere-availability/GUID-FA8B166D-A5F5-47D3-840E-68996507A95B.html",
)
HA_ADMISSION_CONTROL = Reference(
    "vSphere Availability 6.7: Configure Admission Control",
    f"{_VSPHERE}/6.7/com.vmware.vsphere.avail.doc/GUID-C4059DB9-D673-45CB-918C-68C87FEB060A.html",
)
API_DAS_CONFIG = Reference(
    "vSphere API reference: ClusterDasConfigInfo (admissionControlEnabled)",
    "https://developer.broadcom.com/xapis/vmware-storage-policy-api/8.0u2/vim.cluster.DasConfigInfo.html",
)
API_RESTART_PRIORITY = Reference(
    "vSphere API reference: ClusterDasVmSettingsRestartPriority",
    "https://vdc-download.vmware.com/vmwb-repository/dcr-public/"
    "65815ae0-8525-4524-b7f9-18467d0831ff/8a063568-1464-4b8b-8f40-9231bac8a6d9/doc/"
    "vim.cluster.DasVmSettings.RestartPriority.html",
)

# --- PCI passthrough and GPUs -------------------------------------------------------------

DIRECTPATH_IO = Reference(
    "vSphere Networking 8.0: DirectPath I/O",
    f"{_VSPHERE}/8.0/vsphere-networking/GUID-BF2770C3-39ED-4BC5-A8EF-77D55EFE924C.html",
)
PCI_DEVICES_7 = Reference(
    "vSphere Virtual Machine Administration 7.0: PCI Devices",
    f"{_VSPHERE}/7.0/com.vmware.vsphere.vm_admin.doc/GUID-5B3CAB26-5D06-4A99-92A0-3A04C69CE64B.html",
)
PCI_DEVICE_ON_VM_7 = Reference(
    "vSphere Networking 7.0: Configure a PCI Device on a Virtual Machine",
    f"{_VSPHERE}/7.0/com.vmware.vsphere.networking.doc/GUID-E34DB338-9770-4409-82C7-4B2A77EC6EB7.html",
)
ASSIGNABLE_HARDWARE = Reference(
    "VMware: Exposing Hardware Accelerators using Assignable Hardware",
    "https://core.vmware.com/resource/exposing-hardware-accelerators-using-assignable-hardware",
)
API_HOST_GRAPHICS_CONFIG = Reference(
    "vSphere API reference: HostGraphicsConfig (hostDefaultGraphicsType, deviceType)",
    "https://developer.broadcom.com/xapis/virtual-infrastructure-json-api/latest/"
    "data-structures/HostGraphicsConfig",
)
API_ASSIGNMENT_POLICY = Reference(
    "vSphere API reference: HostGraphicsConfigSharedPassthruAssignmentPolicy "
    "(performance, consolidation)",
    "https://developer.broadcom.com/xapis/virtual-infrastructure-json-api/latest/"
    "data-structures/HostGraphicsConfigSharedPassthruAssignmentPolicy_enum",
)
API_VMIOP_BACKING = Reference(
    "vSphere API reference: VirtualPCIPassthroughVmiopBackingInfo (migrateSupported)",
    "https://developer.broadcom.com/xapis/virtual-infrastructure-json-api/latest/"
    "data-structures/VirtualPCIPassthroughVmiopBackingInfo",
)

# --- vMotion ---------------------------------------------------------------------------

VGPU_VMOTION_67 = Reference(
    "vCenter Server and Host Management 6.7: vMotion of NVIDIA vGPU-powered virtual machines",
    f"{_VSPHERE}/6.7/com.vmware.vsphere.vcenterhost.doc/GUID-8FE6A0DA-49E9-472B-815B-D630CF2014AD.html",
)
VGPU_VMOTION_7 = Reference(
    "vCenter Server and Host Management 7.0: vMotion of NVIDIA vGPU-powered virtual machines",
    f"{_VSPHERE}/7.0/com.vmware.vsphere.vcenterhost.doc/GUID-8FE6A0DA-49E9-472B-815B-D630CF2014AD.html",
)
VGPU_STUN_TIME_LIMIT = Reference(
    "vSphere Virtual Machine Administration 8.0: stun time limit for vMotion of vGPU VMs",
    f"{_VSPHERE}/8.0/vsphere-vm-administration/GUID-02E3B010-476B-4E70-A407-BBE0EA250E29.html",
)
VMKERNEL_NETWORKING = Reference(
    "vSphere Networking 8.0: VMkernel Networking Layer",
    f"{_VSPHERE}/8.0/vsphere-networking/GUID-D4191320-209E-4CB5-A709-C8741E713348.html",
)

# --- Storage ----------------------------------------------------------------------------

FC_MULTIPATHING = Reference(
    "vSphere Storage 7.0: Multipathing and Failover with Fibre Channel",
    f"{_VSPHERE}/7.0/com.vmware.vsphere.storage.doc/GUID-769E70B4-4269-4B90-8852-6F4E9AC166C9.html",
)
ISCSI_MULTIPLE_ADAPTERS = Reference(
    "vSphere Storage 7.0: Multiple Network Adapters in iSCSI or iSER Configuration",
    f"{_VSPHERE}/7.0/com.vmware.vsphere.storage.doc/GUID-BC516B24-7EAB-4ADA-819A-10DC496DEE9B.html",
)
ISCSI_NETWORK = Reference(
    "vSphere Storage 6.7: Setting Up Network for iSCSI and iSER (port binding)",
    f"{_VSPHERE}/6.7/com.vmware.vsphere.storage.doc/GUID-0D31125F-DC9D-475B-BC3D-A3E131251642.html",
)

# --- Licensing, monitoring, permissions ----------------------------------------------------

VSPHERE_LICENSING = Reference(
    "vCenter Server and Host Management 7.0: Licensing for Products in vSphere",
    f"{_VSPHERE}/7.0/com.vmware.vsphere.vcenterhost.doc/GUID-710CD935-DBF4-4AF6-A4F7-ED35E552DE4C.html",
)
PERFORMANCE_CHARTS = Reference(
    "vSphere Monitoring and Performance 7.0: Monitoring Inventory Objects with Performance Charts",
    f"{_VSPHERE}/7.0/com.vmware.vsphere.monitoring.doc/GUID-AA1F733C-1450-4437-AB0A-E5FA24CC386E.html",
)
SYSTEM_ROLES = Reference(
    "vSphere Security 7.0: vCenter Server System Roles",
    f"{_VSPHERE}/7.0/com.vmware.vsphere.security.doc/GUID-93B962A7-93FA-4E96-B68F-AE66D3D6C663.html",
)
API_MISSING_PROPERTY = Reference(
    "vSphere Web Services API 8.0 U3: MissingProperty (properties that could not be read)",
    "https://developer.broadcom.com/xapis/vsphere-web-services-api/8.0U3/"
    "vmodl.query.PropertyCollector.MissingProperty.html",
)

# --- NVIDIA -----------------------------------------------------------------------------

NVIDIA_VGPU_USER_GUIDE = Reference(
    "NVIDIA Virtual GPU Software User Guide",
    "https://docs.nvidia.com/grid/latest/grid-vgpu-user-guide/index.html",
)
NVIDIA_LICENSING = Reference(
    "NVIDIA Virtual GPU Client Licensing User Guide (vGPU 15)",
    "https://docs.nvidia.com/grid/15.0/grid-licensing-user-guide/index.html",
)
NVIDIA_LICENSE_SYSTEM = Reference(
    "NVIDIA License System Quick Start Guide",
    "https://docs.nvidia.com/license-system/latest/nvidia-license-system-quick-start-guide/index.html",
)
NVIDIA_SUPPORTED_GPUS = Reference(
    "NVIDIA: GPUs supported by NVIDIA vGPU software",
    "https://docs.nvidia.com/vgpu/gpus-supported-by-vgpu.html",
)
NVIDIA_SUPPORT_MATRIX = Reference(
    "NVIDIA Virtual GPU Software Product Support Matrix",
    "https://docs.nvidia.com/vgpu/latest/product-support-matrix/index.html",
)
NVIDIA_VGPU_RELEASES = Reference(
    "NVIDIA Virtual GPU (vGPU) Software: active and older releases, branch types, end of support",
    "https://docs.nvidia.com/vgpu/index.html",
)
NVIDIA_VGPU_19_VSPHERE_NOTES = Reference(
    "NVIDIA Virtual GPU Software R580 for VMware vSphere Release Notes (vGPU 19.0)",
    "https://docs.nvidia.com/vgpu/19.0/grid-vgpu-release-notes-vmware-vsphere/index.html",
)
NVIDIA_BULLETIN_MAY_2026 = Reference(
    "NVIDIA Security Bulletin: GPU Display Driver - May 2026 (5821): Virtual GPU Manager "
    "fixes for vGPU 16, 19 and 20",
    "https://github.com/NVIDIA/product-security/blob/main/2026/5821/5821.md",
)
NVIDIA_DCGM = Reference(
    "NVIDIA Data Center GPU Manager (DCGM) User Guide",
    "https://docs.nvidia.com/datacenter/dcgm/latest/user-guide/index.html",
)
NVIDIA_MANAGEMENT_SDK = Reference(
    "NVIDIA Virtual GPU Software Management SDK User Guide (vGPU 12): nvidia-smi and NVML",
    "https://docs.nvidia.com/vgpu/12.0/grid-management-sdk-user-guide/index.html",
)
NVIDIA_AI_ENTERPRISE_VMWARE = Reference(
    "NVIDIA AI Enterprise: Deployment Guide for VMware vSphere",
    "https://docs.nvidia.com/ai-enterprise/deployment/vmware/latest/overview.html",
)

# --- Kubernetes and the NVIDIA GPU Operator ---------------------------------------------

K8S_SCHEDULING_GPUS = Reference(
    "Kubernetes documentation: Schedule GPUs",
    "https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/",
)
K8S_ASSIGN_POD_NODE = Reference(
    "Kubernetes documentation: Assigning Pods to Nodes (nodeSelector, node affinity)",
    "https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/",
)
K8S_TAINTS = Reference(
    "Kubernetes documentation: Taints and Tolerations",
    "https://kubernetes.io/docs/concepts/configuration/taint-and-toleration/",
)
NVIDIA_GPU_OPERATOR_MIG = Reference(
    "NVIDIA GPU Operator: GPU Operator with MIG (MIG strategies and resources)",
    "https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-operator-mig.html",
)
DIRECTPATH_CAPACITY = Reference(
    "vSphere API 9.0: DirectPathProfileManagerCapacityInfo (QueryCapacity: max, consumed, "
    "remaining, unusedReservation per profile and host)",
    "https://developer.broadcom.com/xapis/virtual-infrastructure-json-api/latest/"
    "data-structures/DirectPathProfileManagerCapacityInfo",
)
API_DEVICE_GROUPS = Reference(
    "vSphere API 8.0.0.1: VirtualMachineVirtualDeviceGroups (vendor device groups: devices "
    "allocated to a VM as a unit, e.g. a physical link connects them)",
    "https://developer.broadcom.com/xapis/virtual-infrastructure-json-api/latest/"
    "data-structures/VirtualMachineVirtualDeviceGroups",
)
NVIDIA_DEVICE_GROUPS = Reference(
    "NVIDIA AI Enterprise 8.0: Device Groups (GPUs on NVLink presented to the VM as one unit)",
    "https://docs.nvidia.com/ai-enterprise/release-8/8.0/infra-software/vgpu/features/"
    "device-groups.html",
)
NVIDIA_NVSWITCH = Reference(
    "NVIDIA AI Enterprise 8.0: NVIDIA NVSwitch (a crossbar between the GPUs of one system)",
    "https://docs.nvidia.com/ai-enterprise/release-8/8.0/infra-software/vgpu/features/"
    "nvswitch.html",
)
