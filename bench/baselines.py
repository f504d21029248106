"""The two baselines gpuaudit's collector is measured against.

floor: one ContainerView and a bare RetrievePropertiesEx / ContinueRetrievePropertiesEx
loop over every property path gpuaudit reads, for every object, with the same page
size, doing nothing with the answer. Every byte is still parsed by pyVmomi's SOAP
deserialiser, so no pyVmomi client that reads all of these properties of every
object can be faster: it is the lower bound for a single-pass collection. Like
gpuaudit's collector, it pauses the cyclic garbage collector while it parses, and
collects once at the end. gpuaudit reads the VMs' device lists in a second
retrieval, only for the VMs that may hold a GPU, so it can beat this floor.

naive: the style of most published pyVmomi scripts, which walk managed-object
attributes (``vm.config.hardware.device``, ``host.config.graphicsInfo``). Every
attribute read of a managed object is one RetrieveProperties round trip that
returns the whole property (all of ``config``), and a reference followed to its
``name`` is another. It reads the same facts as gpuaudit's collector: the
inventory, a day of GPU counters (one QueryPerf per host, as a script that walks
hosts does) and the licence assignments.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from pyVmomi import vim, vmodl

from gpuaudit.common.gc_pause import gc_paused
from gpuaudit.vsphere.collect.paths import EVERY_PATH
from gpuaudit.vsphere.collect.retrieve import PAGE_SIZE


def floor(si: Any) -> int:
    """Retrieve gpuaudit's property paths for every object; return the object count."""
    with gc_paused():
        return _floor(si)


def _floor(si: Any) -> int:
    content = si.RetrieveContent()
    view = content.viewManager.CreateContainerView(
        container=content.rootFolder, type=list(EVERY_PATH), recursive=True
    )
    try:
        spec = vmodl.query.PropertyCollector.FilterSpec(
            objectSet=[
                vmodl.query.PropertyCollector.ObjectSpec(
                    obj=view,
                    skip=True,
                    selectSet=[
                        vmodl.query.PropertyCollector.TraversalSpec(
                            name="view", path="view", skip=False, type=vim.view.ContainerView
                        )
                    ],
                )
            ],
            propSet=[
                vmodl.query.PropertyCollector.PropertySpec(type=t, pathSet=list(p), all=False)
                for t, p in EVERY_PATH.items()
            ],
        )
        options = vmodl.query.PropertyCollector.RetrieveOptions(maxObjects=PAGE_SIZE)
        collector = content.propertyCollector
        count = 0
        result = collector.RetrievePropertiesEx(specSet=[spec], options=options)
        while result is not None:
            count += len(result.objects)
            if not result.token:
                break
            result = collector.ContinueRetrievePropertiesEx(token=result.token)
        return count
    finally:
        view.DestroyView()


def _view(content: Any, kind: type) -> Any:
    return content.viewManager.CreateContainerView(content.rootFolder, [kind], True)


def naive(si: Any) -> dict[str, int]:
    """Read the facts gpuaudit reads, one attribute at a time."""
    content = si.RetrieveContent()
    counts = {"hosts": 0, "gpus": 0, "vms": 0, "gpu_vms": 0, "clusters": 0, "datastores": 0}
    facts: list[Any] = []

    for cluster in _view(content, vim.ClusterComputeResource).view:
        das = cluster.configurationEx.dasConfig
        facts.append((cluster.name, das.enabled, das.admissionControlPolicy))
        facts.append(cluster.configurationEx.drsConfig.enabled)
        facts.extend((o.key.name, o.dasSettings) for o in cluster.configurationEx.dasVmConfig)
        counts["clusters"] += 1

    gpu_counters = [
        c.key
        for c in content.perfManager.perfCounter
        if c.groupInfo.key == "gpu" and c.rollupType == "average"
    ]
    end = si.CurrentTime()
    manager = content.licenseManager.licenseAssignmentManager
    facts.extend((a.entityId, a.assignedLicense.name) for a in manager.QueryAssignedLicenses())

    for host in _view(content, vim.HostSystem).view:
        counts["hosts"] += 1
        facts.append((host.name, host.parent.name, host.summary.config.product.version))
        facts.append((host.summary.hardware.model, host.runtime.connectionState))
        facts.append(host.runtime.inMaintenanceMode)
        if host.config is None:
            continue
        host_gpus = 0
        for dev in host.hardware.pciDevice:
            if dev.classId in (0x300, 0x302):
                host_gpus += 1
                counts["gpus"] += 1
                facts.append((dev.id, dev.vendorId, dev.deviceId, dev.deviceName))
        facts.extend((p.id, p.passthruEnabled) for p in host.config.pciPassthruInfo)
        for info in host.config.graphicsInfo:
            facts.append((info.pciId, info.graphicsType, [vm.name for vm in info.vm]))
        facts.append(host.config.graphicsConfig.hostDefaultGraphicsType)
        facts.append(list(host.config.sharedPassthruGpuTypes))
        facts.extend((c.vgpu, c.migrateSupported) for c in host.config.sharedGpuCapabilities)
        for hba in host.config.storageDevice.hostBusAdapter:
            facts.append((hba.device, type(hba).__name__, hba.status))
        facts.extend(lun.canonicalName for lun in host.config.storageDevice.scsiLun)
        for lun in host.config.storageDevice.multipathInfo.lun:
            facts.extend((p.adapter, p.state) for p in lun.path)
        for net in host.config.virtualNicManagerInfo.netConfig:
            if net.nicType == "vmotion":
                facts.append((net.selectedVnic, [c.device for c in net.candidateVnic]))
        facts.extend((p.device, p.linkSpeed) for p in host.config.network.pnic)
        facts.extend((s.name, s.pnic) for s in host.config.network.vswitch)
        facts.extend((g.spec.name, g.spec.vswitchName) for g in host.config.network.portgroup)
        if host_gpus and gpu_counters:
            spec = vim.PerformanceManager.QuerySpec(
                entity=host,
                startTime=end - dt.timedelta(hours=24),
                endTime=end,
                intervalId=300,
                metricId=[
                    vim.PerformanceManager.MetricId(counterId=c, instance="*") for c in gpu_counters
                ],
            )
            facts.append(content.perfManager.QueryPerf(querySpec=[spec]))

    for ds in _view(content, vim.Datastore).view:
        counts["datastores"] += 1
        facts.append((ds.name, ds.summary.type, ds.summary.capacity, ds.summary.freeSpace))
        info = ds.info
        vmfs = info.vmfs if isinstance(info, vim.host.VmfsDatastoreInfo) else None
        facts.append(getattr(vmfs, "extent", None))
        facts.extend((m.key.name, m.mountInfo.accessible) for m in ds.host)

    for vm in _view(content, vim.VirtualMachine).view:
        if vm.config is None or vm.config.template:
            continue
        counts["vms"] += 1
        facts.append((vm.name, vm.runtime.powerState, vm.runtime.host.name))
        facts.append((vm.config.hardware.memoryMB, vm.config.memoryReservationLockedToMax))
        facts.append(vm.resourceConfig.memoryAllocation.reservation)
        facts.append([ds.name for ds in vm.datastore])
        gpus = [
            dev.backing
            for dev in vm.config.hardware.device
            if isinstance(dev, vim.vm.device.VirtualPCIPassthrough)
        ]
        if gpus:
            counts["gpu_vms"] += 1
            facts.append(gpus)
    return counts
