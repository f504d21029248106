"""A small builder of plain Inventory objects for the rule, simulation and check tests.

``healthy()`` is a clean Scenario B cluster: three hosts with one L4 each in vGPU
mode, an FC datastore on all of them with two paths through two HBAs, vMotion,
HA with admission control and one reserved vGPU VM per host. Every rule passes on
it but VM-06, which is not proven: its hosts' vGPU manager version is unknown, as
in a scan with the Read-only role. Each test breaks one thing.
"""

from __future__ import annotations

from datetime import date

from gpuaudit.inventory import (
    AdmissionControl,
    Cluster,
    Datastore,
    DatastoreMount,
    Gpu,
    GpuAttachment,
    Host,
    Inventory,
    LunPath,
    StorageAdapter,
    VCenter,
    VgpuProfile,
    Vm,
    VmotionNic,
)
from gpuaudit.knowledge import catalog
from gpuaudit.model.facts import Facts
from gpuaudit.model.policy import Policy
from gpuaudit.rules.registry import Context

MODELS = {
    "l4": (0x27B8, "NVIDIA L4", 24 * 1024),
    "t4": (0x1EB8, "NVIDIA T4", 16 * 1024),
    "a10": (0x2236, "NVIDIA A10", 24 * 1024),
    "a100": (0x20B5, "NVIDIA A100 PCIe 80GB", 80 * 1024),
    "l40s": (0x26B9, "NVIDIA L40S", 48 * 1024),
}
# GPUs whose vGPUs run on SR-IOV virtual functions (Ampere and later), as the host
# reports them: SR-IOV capable, with every virtual function active in vGPU mode.
SRIOV_MODELS = {"l4", "a10", "a100", "l40s"}


class Estate:
    def __init__(self) -> None:
        self.inv = Inventory(vcenter=VCenter(name="vc", vgpu_hotmigrate_enabled=True))

    def cluster(self, name: str, ha: bool = True, admission: bool = True) -> Cluster:
        c = Cluster(
            name=name,
            moref=f"domain-{name}",
            ha_enabled=ha,
            ha_host_monitoring=True,
            admission_control=AdmissionControl(enabled=admission, policy="percent"),
        )
        self.inv.clusters.append(c)
        return c

    def host(
        self,
        name: str,
        cluster: str | None,
        profiles: tuple[str, ...] = ("grid_l4-4q", "grid_l4-8q", "grid_l4-12q", "grid_l4-24q"),
        fc: int = 2,
        vmotion: bool = True,
    ) -> Host:
        h = Host(
            name=name,
            moref=f"host-{name}",
            cluster=cluster,
            version="8.0.3",
            build="24022510",
            max_evc_mode="intel-sapphirerapids",
            default_graphics_type="sharedDirect",
            vgpu_profiles=[VgpuProfile(p, migrate_supported=True) for p in profiles],
            adapters=[StorageAdapter("vmhba0", "block", status="online")]
            + [StorageAdapter(f"vmhba{2 + i}", "fc", status="online") for i in range(fc)],
            vmotion_nics=[VmotionNic("vmk1", "10.0.0.1", uplink_speed_mbps=25000)]
            if vmotion
            else [],
        )
        self.inv.hosts.append(h)
        return h

    def gpu(
        self,
        host: Host,
        pci_id: str = "0000:3b:00.0",
        model: str = "l4",
        mode: str = "vgpu",
        vgpu_mode: str | None = None,
    ) -> Gpu:
        device, name, memory = MODELS[model]
        passthrough = mode in ("passthrough", "pending")
        g = Gpu(
            pci_id=pci_id,
            vendor_id=catalog.NVIDIA,
            device_id=device,
            device_name=name,
            model=name,
            known_model=True,
            memory_mb=memory,
            passthrough_capable=True,
            passthrough_enabled=passthrough,
            passthrough_active=mode == "passthrough",
            graphics_type="sharedDirect"
            if mode == "vgpu"
            else "direct"
            if passthrough
            else "basic",
            vgpu_mode=vgpu_mode,
        )
        if model in SRIOV_MODELS:
            vgpu = mode == "vgpu"
            g.sriov_capable, g.sriov_enabled, g.sriov_active = True, vgpu, vgpu
            g.sriov_vfs = 16 if vgpu else 0
        host.gpus.append(g)
        return g

    def datastore(
        self, name: str, hosts: list[Host], transport: str = "fc", paths: int = 2
    ) -> Datastore:
        kind = {"local": "block"}.get(transport, transport)
        mounts = []
        for h in hosts:
            adapters = [a.device for a in h.adapters if a.kind == kind][:paths]
            lun_paths = [LunPath(a, kind) for a in adapters] if transport != "nfs" else []
            mounts.append(DatastoreMount(h.name, paths=lun_paths))
        ds = Datastore(
            name=name,
            moref=f"ds-{name}",
            type="NFS" if transport == "nfs" else "VMFS",
            transport=transport,
            local=transport == "local",
            multiple_host_access=len(hosts) > 1,
            mounts=mounts,
        )
        self.inv.datastores.append(ds)
        return ds

    def vm(
        self,
        name: str,
        host: Host,
        datastores: list[str],
        vgpu: str | None = None,
        gpu: Gpu | None = None,
        passthrough: Gpu | None = None,
        dynamic: Gpu | None = None,
        power: str = "poweredOn",
        priority: str | None = None,
    ) -> Vm:
        vm = Vm(
            name=name,
            moref=f"vm-{name}",
            host=host.name,
            cluster=host.cluster,
            power_state=power,
            memory_mb=16384,
            memory_reservation_mb=16384,
            datastores=datastores,
            restart_priority=priority,
            firmware="efi",
        )
        on = power == "poweredOn"
        if vgpu is not None:
            vm.gpus.append(GpuAttachment("vgpu", profile=vgpu))
            target = gpu or host.gpus[0]
            if on:
                target.vms.append(name)
        if passthrough is not None:
            vm.gpus.append(
                GpuAttachment(
                    "passthrough",
                    pci_id=passthrough.pci_id,
                    vendor_id=passthrough.vendor_id,
                    device_id=passthrough.device_id,
                )
            )
            if on:
                passthrough.vms.append(name)
        if dynamic is not None:
            vm.gpus.append(
                GpuAttachment(
                    "dynamic",
                    pci_id=dynamic.pci_id if on else None,
                    allowed=[(dynamic.vendor_id, dynamic.device_id)],
                )
            )
            if on:
                dynamic.vms.append(name)
        self.inv.vms.append(vm)
        return vm


def healthy() -> Estate:
    """A clean Scenario B cluster "c1" with hosts h1..h3 and VMs v1..v3 (grid_l4-8q)."""
    e = Estate()
    e.cluster("c1")
    hosts = [e.host(f"h{i}", "c1") for i in (1, 2, 3)]
    for h in hosts:
        e.gpu(h)
    e.datastore("san1", hosts)
    for i, h in enumerate(hosts, 1):
        e.vm(f"v{i}", h, ["san1"], vgpu="grid_l4-8q")
    return e


def passthrough_estate(buffer: bool = False) -> Estate:
    """Scenario A (or C with ``buffer``): fixed passthrough on local disks, HA off."""
    e = Estate()
    e.cluster("pt", ha=False, admission=False)
    for i in (1, 2):
        h = e.host(f"p{i}", "pt", profiles=(), fc=0)
        g = e.gpu(h, mode="passthrough")
        e.datastore(f"local-p{i}", [h], transport="local")
        e.vm(f"pv{i}", h, [f"local-p{i}"], passthrough=g)
    if buffer:
        h = e.host("p3", "pt", profiles=(), fc=0)
        e.gpu(h, mode="passthrough")
    return e


def context(inv: Inventory, policy: Policy | None = None, today: date | None = None) -> Context:
    """What a rule reads about ``inv``: its facts, the policy (the default one unless
    given) and a fixed date; no simulations (the rules that need them compare clusters)."""
    return Context(
        facts=Facts(inv),
        policy=policy or Policy.default(),
        simulations={},
        today=today or date(2027, 1, 15),
    )
