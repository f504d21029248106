"""AuditResults for the report tests: a realistic estate, a hostile one, and a large one.

The realistic estate has three clusters: vGPU on an FC SAN (design B), passthrough
edge nodes with a buffer node (design C) and an A16 VDI cluster with a host that
does not answer (design "other"). The hostile variant is the same estate with
every name that a vCenter admin could type replaced by something that tries to
escape its format: markup, formula prefixes, paths, control characters.
"""

from __future__ import annotations

from collections.abc import Callable

from gpuaudit.inventory import (
    AdmissionControl,
    Cluster,
    Datastore,
    DatastoreMount,
    Gap,
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
from gpuaudit.results import (
    AuditResult,
    ClusterSimulation,
    Finding,
    GpuSlots,
    HostFailure,
    Placement,
    Rule,
    RuleError,
    Waiver,
)

L4 = (0x10DE, 0x27B8, "NVIDIA L4", 24576)
A16 = (0x10DE, 0x25B6, "NVIDIA A16", 16384)

RULES = [
    Rule(
        "HA-01",
        "vSphere HA is enabled on clusters with GPU VMs",
        "ha",
        "high",
        "VMware HA restarts VMs on another host; without it a host failure is an outage.",
        "Enable vSphere HA with host monitoring on the cluster.",
        "cluster",
    ),
    Rule(
        "HA-02",
        "Admission control reserves a host's worth of capacity",
        "ha",
        "high",
        "If you run all GPUs at 100%, no HA exists.",
        "Enable admission control with a failover level of at least one host.",
        "cluster",
    ),
    Rule(
        "HA-03",
        "Every GPU VM restarts after the worst single-host failure (N+1)",
        "ha",
        "critical",
        "N+1 capacity rule: keep one host's GPUs free for failover.",
        "Add a buffer host or lower GPU load so one host's VMs fit on the rest.",
        "cluster",
    ),
    Rule(
        "VM-01",
        "vGPU hot migration is enabled in vCenter",
        "vmotion",
        "medium",
        "vMotion of vGPU VMs needs vgpu.hotmigrate.enabled.",
        "Set vgpu.hotmigrate.enabled to true in vCenter's advanced settings.",
        "vcenter",
    ),
    Rule(
        "VM-02",
        "The vMotion network runs at 10 Gb/s or faster",
        "vmotion",
        "medium",
        "A vGPU VM's frame buffer is copied during vMotion.",
        "Move vMotion to a 10 Gb/s or faster uplink.",
        "host",
    ),
    Rule(
        "GPU-01",
        "Passthrough VMs reserve all their memory",
        "gpu",
        "high",
        "A VM with a DirectPath device does not power on without a full reservation.",
        "Reserve all guest memory (memory_locked_to_max).",
        "vm",
    ),
    Rule(
        "GPU-02",
        "Every host of a cluster offers the same vGPU profiles",
        "gpu",
        "medium",
        "HA places a vGPU VM only on a host with its profile.",
        "Configure the same GPU model and vGPU mode on every host.",
        "cluster",
    ),
    Rule(
        "ST-01",
        "GPU VMs live on storage every host of their cluster reaches",
        "storage",
        "critical",
        "VMware HA needs the VMDK accessible by all ESXi hosts.",
        "Storage vMotion the VM to a shared datastore (FC or iSCSI SAN).",
        "vm",
    ),
    Rule(
        "ST-02",
        "SAN datastores have redundant paths from every host",
        "storage",
        "medium",
        "A single HBA path is a single point of failure.",
        "Zone a second HBA port or add an iSCSI path.",
        "datastore",
    ),
    Rule(
        "DS-01",
        "The cluster follows a known GPU HA design",
        "design",
        "info",
        "Scenario A, B or C of the GPU HA strategy.",
        "Pick one design per cluster and configure it fully.",
        "cluster",
    ),
    Rule(
        "DATA-01",
        "The inventory is complete",
        "data",
        "low",
        "A property that could not be read leaves verdicts uncertain.",
        "Grant the audit account read access on the whole inventory.",
        "inventory",
    ),
]

# Logical name -> the name the estate uses. The hostile variant replaces these.
NAMES: dict[str, str] = {
    "vcenter": "vcsa01.corp.example",
    "source": "vcsa01.corp.example",
    "dc": "DC-East",
    "c1": "gpu-vgpu-prod",
    "c2": "gpu-pt-edge",
    "c3": "vdi-a16",
    "p1": "esx-p01.corp.example",
    "p2": "esx-p02.corp.example",
    "p3": "esx-p03.corp.example",
    "e1": "edge-01.corp.example",
    "e2": "edge-02.corp.example",
    "e3": "edge-03.corp.example",
    "eb": "edge-buffer.corp.example",
    "v1": "vdi-h01.corp.example",
    "v2": "vdi-h02.corp.example",
    "ds_fc": "fc-gold-01",
    "ds_l1": "edge-01-local",
    "ds_l2": "edge-02-local",
    "ds_l3": "edge-03-local",
    "ds_nfs": "nfs-vdi-01",
    "profile": "grid_l4-4q",
    "portgroup": "vMotion-PG",
    "waiver_reason": "Edge nodes rebuild from Kubernetes; accepted by CAB-1234",
    "owner": "ops-gpu@corp.example",
    "message_extra": "",
}
for i in range(1, 11):
    NAMES[f"vdi{i}"] = f"vdi-{i:02d}"
for i in range(1, 4):
    NAMES[f"inf{i}"] = f"infer-{i:02d}"
for i in range(1, 5):
    NAMES[f"a16vm{i}"] = f"desk-{i:02d}"

LONG = "x" * 250 + "-long"
HOSTILE: dict[str, str] = {
    "vcenter": "</script><!--<b>vc</b>",
    "source": "vc01/../../etc/passwd:443",
    "c1": "<script>alert(1)</script>",
    "c2": "Ünïcødé 集群 ✓ café",
    "c3": "\"quoted\" & 'single' </title>",
    "p1": '<img src=x onerror="window.__pwned=1">',
    "p2": "=cmd|' /C calc'!A0",
    "e1": LONG,
    "eb": "ctl\x01host\x0bname\x1f",
    "ds_fc": "../../etc/passwd",
    "ds_nfs": '=HYPERLINK("http://attacker.invalid","x")',
    "vdi1": "=cmd|' /C calc'!A0",
    "vdi2": "+1+1",
    "vdi3": "-2",
    "vdi4": "@SUM(1)",
    "vdi5": "\ttab",
    "vdi6": "\rcr",
    "vdi7": '"quoted" name\'s',
    "vdi8": "bell\x07and\x00nul",
    "vdi9": '<svg onload="window.__pwned=1">',
    "vdi10": "]]><x>&amp;</x>",
    "inf1": "{{ 7*7 }} {% raw %}",
    "inf2": "line\nbreak",
    "inf3": "\u2028sep\u2029\ufeffbom",
    "profile": "grid_l4-4q<i>",
    "portgroup": 'PG"><script>window.__pwned=1</script>',
    "waiver_reason": "<a href=javascript:alert(1)>ok</a>",
    "owner": "@owner",
    "message_extra": ' </script><!-- <img src=x onerror="window.__pwned=1">',
}


def _gpu(pci: str, model: tuple[int, int, str, int], *, vgpu: bool, vms: list[str]) -> Gpu:
    vendor, device, name, memory = model
    return Gpu(
        pci_id=pci,
        vendor_id=vendor,
        device_id=device,
        vendor_name="NVIDIA Corporation",
        device_name=name.replace("NVIDIA ", "") + " [generic]",
        model=name,
        known_model=True,
        memory_mb=memory,
        passthrough_capable=True,
        passthrough_enabled=not vgpu,
        passthrough_active=not vgpu and bool(vms),
        graphics_type="sharedDirect" if vgpu else "direct",
        vgpu_mode="sameSize" if vgpu else None,
        vms=vms,
    )


def _host(
    n: dict[str, str],
    key: str,
    cluster: str,
    gpus: list[Gpu],
    *,
    fc: bool = False,
    speed: int = 25000,
    state: str = "connected",
    profiles: list[str] | None = None,
    index: int = 1,
) -> Host:
    adapters = [StorageAdapter("vmhba0", "block", key="key-0", model="Dell BOSS-S2", driver="ahci")]
    if fc:
        adapters += [
            StorageAdapter(
                f"vmhba{i}",
                "fc",
                key=f"key-{i}",
                model="QLogic QLE2772",
                driver="qlnativefc",
                status="online",
                port_wwn=f"21:00:00:24:ff:{index:02x}:00:{i:02x}",
                node_wwn=f"20:00:00:24:ff:{index:02x}:00:{i:02x}",
            )
            for i in (2, 3)
        ]
    return Host(
        name=n[key],
        moref=f"host-{key}",
        datacenter=n["dc"],
        cluster=cluster,
        version="8.0.3",
        build="24022515",
        vendor="Dell Inc.",
        model="PowerEdge R760",
        connection_state=state,
        cpu_cores=64,
        cpu_mhz=2600,
        memory_mb=1048576,
        gpus=gpus,
        vgpu_profiles=[
            VgpuProfile(p, migrate_supported=True, suspend_supported=True) for p in (profiles or [])
        ],
        default_graphics_type="sharedDirect" if profiles else "basic",
        assignment_policy="performance" if profiles else None,
        vmotion_nics=[VmotionNic("vmk1", f"192.0.2.{index}", n["portgroup"], speed)],
        adapters=adapters,
    )


def _slots(
    host: str,
    pci: str,
    model: tuple[int, int, str, int],
    mode: str,
    vms: list[str],
    profile: str | None = None,
    capacity: int = 1,
) -> GpuSlots:
    used_mb = len(vms) * 4096 if mode == "vgpu" else (model[3] if vms else 0)
    return GpuSlots(
        host, pci, model[2], model[3], mode, profile, capacity, len(vms), used_mb, list(vms)
    )


def build_result(names: dict[str, str] | None = None) -> AuditResult:
    """The three-cluster estate, with ``names`` overriding any logical name."""
    n = dict(NAMES)
    n.update(names or {})
    c1, c2, c3 = n["c1"], n["c2"], n["c3"]
    vdi = [n[f"vdi{i}"] for i in range(1, 11)]
    inf = [n[f"inf{i}"] for i in range(1, 4)]
    desks = [n[f"a16vm{i}"] for i in range(1, 5)]
    prof = n["profile"]

    # Cluster 1: three vGPU hosts, two L4s each, six 4Q slots per L4.
    placement = {  # host key -> GPU -> VMs
        "p1": {"0000:3b:00.0": vdi[0:3], "0000:5e:00.0": vdi[3:4]},
        "p2": {"0000:3b:00.0": vdi[4:6], "0000:5e:00.0": vdi[6:7]},
        "p3": {"0000:3b:00.0": vdi[7:9], "0000:5e:00.0": vdi[9:10]},
    }
    hosts = []
    for i, key in enumerate(("p1", "p2", "p3"), start=1):
        gpus = [_gpu(pci, L4, vgpu=True, vms=vms) for pci, vms in placement[key].items()]
        hosts.append(
            _host(
                n,
                key,
                c1,
                gpus,
                fc=True,
                profiles=[prof, "grid_l4-8q"],
                index=i,
                speed=10000 if key != "p3" else 1000,
            )
        )
    # Cluster 2: three passthrough edge nodes and a buffer node without a GPU.
    for i, key in enumerate(("e1", "e2", "e3"), start=4):
        gpus = [_gpu("0000:17:00.0", L4, vgpu=False, vms=[inf[i - 4]])]
        hosts.append(_host(n, key, c2, gpus, index=i))
    hosts.append(_host(n, "eb", c2, [], index=7))
    # Cluster 3: A16 VDI, one host not responding.
    a16 = [
        _gpu(f"0000:{b}:00.0", A16, vgpu=True, vms=desks[j : j + 1] if j < 4 else [])
        for j, b in enumerate(("41", "42", "43", "44"))
    ]
    hosts.append(_host(n, "v1", c3, a16, profiles=["grid_a16-2b"], index=8))
    hosts.append(_host(n, "v2", c3, [], state="notResponding", index=9))

    clusters = [
        Cluster(
            c1,
            "domain-c1",
            n["dc"],
            ha_enabled=True,
            ha_host_monitoring=True,
            admission_control=AdmissionControl(True, "percent", None, 33, 33),
            drs_enabled=True,
            drs_automation="fullyAutomated",
        ),
        Cluster(c2, "domain-c2", n["dc"], ha_enabled=False),
        Cluster(
            c3,
            "domain-c3",
            n["dc"],
            ha_enabled=True,
            ha_host_monitoring=True,
            admission_control=AdmissionControl(False),
            drs_enabled=True,
            drs_automation="manual",
            restart_priority_overrides={desks[0]: "high"},
        ),
    ]

    vms = []
    for key, gpus in placement.items():
        for pci, names_ in gpus.items():
            for name in names_:
                vms.append(
                    Vm(
                        name,
                        f"vm-{len(vms) + 1}",
                        host=n[key],
                        cluster=c1,
                        datacenter=n["dc"],
                        power_state="poweredOn",
                        memory_mb=16384,
                        memory_reservation_mb=16384,
                        datastores=[n["ds_fc"]],
                        gpus=[GpuAttachment("vgpu", "PCI device 0", prof, True, pci)],
                    )
                )
    for i, name in enumerate(inf):
        host = n[("e1", "e2", "e3")[i]]
        vms.append(
            Vm(
                name,
                f"vm-{len(vms) + 1}",
                host=host,
                cluster=c2,
                datacenter=n["dc"],
                power_state="poweredOn",
                memory_mb=32768,
                memory_reservation_mb=32768 if i else 8192,
                memory_locked_to_max=bool(i),
                datastores=[n[f"ds_l{i + 1}"]],
                gpus=[
                    GpuAttachment(
                        "passthrough", "PCI device 0", None, None, "0000:17:00.0", 0x10DE, 0x27B8
                    )
                ],
            )
        )
    for j, name in enumerate(desks):
        vms.append(
            Vm(
                name,
                f"vm-{len(vms) + 1}",
                host=n["v1"],
                cluster=c3,
                datacenter=n["dc"],
                power_state="poweredOn" if j < 3 else "poweredOff",
                memory_mb=8192,
                datastores=[n["ds_nfs"]],
                restart_priority="high" if j == 0 else None,
                gpus=[GpuAttachment("vgpu", "PCI device 0", "grid_a16-2b", None, a16[j].pci_id)],
            )
        )
    vms.append(
        Vm(
            "jump-01",
            "vm-99",
            host=n["eb"],
            cluster=c2,
            datacenter=n["dc"],
            power_state="poweredOn",
            memory_mb=4096,
            datastores=[n["ds_l1"]],
        )
    )

    fc_mounts = [
        DatastoreMount(
            n[k],
            paths=[
                LunPath("vmhba2", "fc"),
                LunPath("vmhba3", "fc", "dead" if k == "p2" else "active"),
            ],
        )
        for k in ("p1", "p2", "p3")
    ]
    datastores = [
        Datastore(
            n["ds_fc"],
            "datastore-1",
            n["dc"],
            "VMFS",
            8388608,
            2097152,
            True,
            False,
            ["naa.600a098038303053453f463045726e41"],
            "fc",
            fc_mounts,
        ),
        *[
            Datastore(
                n[f"ds_l{i}"],
                f"datastore-{i + 1}",
                n["dc"],
                "VMFS",
                1887436,
                943718,
                False,
                True,
                [f"naa.5000c500a1b2c3d{i}"],
                "local",
                [DatastoreMount(n[f"e{i}"], paths=[LunPath("vmhba0", "block")])],
            )
            for i in (1, 2, 3)
        ],
        Datastore(
            n["ds_nfs"],
            "datastore-9",
            n["dc"],
            "NFS41",
            4194304,
            104858,
            True,
            None,
            [],
            "nfs",
            [DatastoreMount(n["v1"]), DatastoreMount(n["v2"], accessible=False)],
        ),
    ]

    gaps = [
        Gap(n["v2"], "HostSystem", "config.graphicsInfo", "notResponding", "host-v2"),
        Gap(n["v2"], "HostSystem", "config.storageDevice", "notResponding", "host-v2"),
        Gap(desks[3], "VirtualMachine", "config.hardware.device", "NoPermission", "vm-17"),
    ]
    inventory = Inventory(
        source=n["source"],
        collected_at="2026-11-30T08:49:12Z",
        vcenter=VCenter(
            n["vcenter"],
            "VMware vCenter Server",
            "8.0.3",
            "24022515",
            "8.0.3.0",
            "VirtualCenter",
            "4f1c2a8e-1111-2222-3333-444455556666",
            False,
        ),
        datacenters=[n["dc"]],
        clusters=clusters,
        hosts=hosts,
        datastores=datastores,
        vms=vms,
        gaps=gaps,
    )

    # Failover simulations.
    sim1 = ClusterSimulation(c1, hosts=3, gpu_vms=10, worst_host=n["p1"], tolerates=1)
    for key in ("p1", "p2", "p3"):
        for pci, names_ in placement[key].items():
            sim1.capacity.append(_slots(n[key], pci, L4, "vgpu", names_, prof, 6))
    moved = {"p2": {"0000:5e:00.0": vdi[0:3]}, "p3": {"0000:5e:00.0": vdi[3:4]}}
    for key in ("p2", "p3"):
        for pci, names_ in placement[key].items():
            extra = moved[key].get(pci, [])
            sim1.after_worst.append(_slots(n[key], pci, L4, "vgpu", names_ + extra, prof, 6))
    for key in ("p1", "p2", "p3"):
        displaced = [v for vs in placement[key].values() for v in vs]
        others = [k for k in ("p1", "p2", "p3") if k != key]
        sim1.failures.append(
            HostFailure(
                n[key],
                len(displaced),
                placed=[
                    Placement(v, n[key], n[others[j % 2]], "0000:5e:00.0")
                    for j, v in enumerate(displaced)
                ],
            )
        )

    sim2 = ClusterSimulation(c2, hosts=4, gpu_vms=3, worst_host=n["e1"], tolerates=0)
    for i, key in enumerate(("e1", "e2", "e3")):
        sim2.capacity.append(_slots(n[key], "0000:17:00.0", L4, "passthrough", [inf[i]]))
    sim2.after_worst = [s for s in sim2.capacity if s.host != n["e1"]]
    for i, key in enumerate(("e1", "e2", "e3")):
        sim2.failures.append(
            HostFailure(
                n[key],
                1,
                unplaced=[
                    Placement(inf[i], n[key], reason="no free passthrough GPU in the cluster")
                ],
            )
        )

    sim3 = ClusterSimulation(c3, hosts=2, gpu_vms=3, worst_host=n["v1"], tolerates=0)
    for j, g in enumerate(a16):
        sim3.capacity.append(
            _slots(
                n["v1"], g.pci_id, A16, "vgpu", desks[j : j + 1] if j < 3 else [], "grid_a16-2b", 8
            )
        )
    sim3.failures.append(
        HostFailure(
            n["v1"],
            3,
            unplaced=[
                Placement(
                    d,
                    n["v1"],
                    reason=f"no host offers grid_a16-2b{n['message_extra']}",
                    restart_priority="high" if j == 0 else "medium",
                )
                for j, d in enumerate(desks[:3])
            ],
        )
    )
    sim3.failures.append(HostFailure(n["v2"], 0))

    waiver = Waiver("HA-01", c2, n["waiver_reason"], n["owner"], "2027-03-31")
    expired = Waiver("VM-02", n["p3"], "Uplink upgrade planned", n["owner"], "2026-10-31")
    extra = n["message_extra"]
    F = Finding
    findings = [
        F("HA-01", c1, "cluster", "pass", "high", "vSphere HA is enabled", c1),
        F(
            "HA-01",
            c2,
            "cluster",
            "waived",
            "high",
            f"vSphere HA is disabled{extra}",
            c2,
            evidence={"ha_enabled": False, "gpu_vms": 3},
            waiver=waiver,
        ),
        F("HA-01", c3, "cluster", "pass", "high", "vSphere HA is enabled", c3),
        F(
            "HA-02",
            c1,
            "cluster",
            "pass",
            "high",
            "Admission control reserves 33% CPU and memory",
            c1,
            evidence={"policy": "percent", "cpu_percent": 33, "memory_percent": 33},
        ),
        F(
            "HA-02",
            c3,
            "cluster",
            "fail",
            "high",
            "Admission control is disabled",
            c3,
            evidence={"enabled": False},
        ),
        F(
            "HA-03",
            c1,
            "cluster",
            "pass",
            "critical",
            "Tolerates one host failure (N+1)",
            c1,
            evidence={"tolerates": 1, "worst_host": n["p1"]},
        ),
        F(
            "HA-03",
            c2,
            "cluster",
            "fail",
            "critical",
            f"A failure of {n['e1']} leaves 1 GPU VM without a GPU{extra}",
            c2,
            evidence={
                "tolerates": 0,
                "worst_host": n["e1"],
                "unplaced": [inf[0]],
                "free_passthrough_gpus": 0,
            },
        ),
        F(
            "HA-03",
            c3,
            "cluster",
            "fail",
            "critical",
            f"A failure of {n['v1']} leaves 3 GPU VMs without a GPU",
            c3,
            evidence={
                "tolerates": 0,
                "worst_host": n["v1"],
                "unplaced": desks[:3],
                "hosts_offering_profile": [n["v1"]],
            },
        ),
        F(
            "VM-01",
            n["vcenter"],
            "vcenter",
            "fail",
            "medium",
            "vgpu.hotmigrate.enabled is false: vGPU VMs cannot be vMotioned",
            evidence={"setting": "vgpu.hotmigrate.enabled", "value": False},
        ),
        F(
            "VM-02",
            n["p1"],
            "host",
            "pass",
            "medium",
            "vmk1 runs at 10 Gb/s",
            c1,
            n["p1"],
            evidence={"device": "vmk1", "uplink_speed_mbps": 10000},
        ),
        F(
            "VM-02",
            n["p3"],
            "host",
            "fail",
            "medium",
            "vmk1 runs at 1 Gb/s",
            c1,
            n["p3"],
            evidence={"device": "vmk1", "uplink_speed_mbps": 1000, "portgroup": n["portgroup"]},
        ),
        F(
            "GPU-01",
            inf[0],
            "vm",
            "fail",
            "high",
            "8192 MB of 32768 MB reserved: the VM will not power on after a restart",
            c2,
            n["e1"],
            evidence={
                "memory_mb": 32768,
                "memory_reservation_mb": 8192,
                "memory_locked_to_max": False,
            },
        ),
        F("GPU-01", inf[1], "vm", "pass", "high", "All memory reserved", c2, n["e2"]),
        F("GPU-01", inf[2], "vm", "pass", "high", "All memory reserved", c2, n["e3"]),
        F("GPU-02", c1, "cluster", "pass", "medium", "Every host offers the same profiles", c1),
        F(
            "GPU-02",
            c3,
            "cluster",
            "fail",
            "medium",
            f"{n['v2']} offers no vGPU profile",
            c3,
            evidence={"profiles": {n["v1"]: ["grid_a16-2b"], n["v2"]: []}},
        ),
        F(
            "ST-01",
            inf[0],
            "vm",
            "waived",
            "critical",
            "On local storage of one host",
            c2,
            n["e1"],
            evidence={"datastores": [n["ds_l1"]], "transport": "local"},
            waiver=waiver,
        ),
        F(
            "ST-02",
            n["ds_fc"],
            "datastore",
            "fail",
            "medium",
            f"{n['p2']} has one active path of two",
            c1,
            n["p2"],
            evidence={"host": n["p2"], "paths": {"vmhba2": "active", "vmhba3": "dead"}},
        ),
        F(
            "ST-02",
            n["ds_nfs"],
            "datastore",
            "fail",
            "low",
            f"{n['v2']} cannot access it",
            c3,
            evidence={"inaccessible_from": [n["v2"]]},
        ),
        F(
            "DS-01",
            c1,
            "cluster",
            "pass",
            "info",
            "Design B: VMware HA with SAN and vGPU",
            c1,
            evidence={"design": "B"},
        ),
        F(
            "DS-01",
            c2,
            "cluster",
            "pass",
            "info",
            "Design C: passthrough with a buffer node",
            c2,
            evidence={"design": "C"},
        ),
        F(
            "DS-01",
            c3,
            "cluster",
            "fail",
            "info",
            "No known design: NFS, HA without spare GPU",
            c3,
            evidence={"design": "other"},
        ),
        F(
            "DATA-01",
            "inventory",
            "inventory",
            "fail",
            "low",
            "3 properties could not be read",
            evidence={"gaps": 3, "objects": [n["v2"], desks[3]]},
        ),
    ]
    for v in vdi:
        findings.append(
            F(
                "ST-01",
                v,
                "vm",
                "pass",
                "critical",
                "On shared FC storage",
                c1,
                evidence={"datastores": [n["ds_fc"]], "transport": "fc"},
            )
        )
    return AuditResult(
        inventory=inventory,
        rules=list(RULES),
        findings=findings,
        simulations=[sim1, sim2, sim3],
        checked_at="2026-11-30T08:50:00Z",
        tool_version="0.1.0",
        policy_source="policies/gpu-prod.yaml",
        waivers=[waiver],
        expired_waivers=[expired],
        errors=[RuleError("GPU-03", f"KeyError: 'profile'{extra}")],
        designs={c1: "B", c2: "C", c3: "other"},
    )


def realistic_result() -> AuditResult:
    return build_result()


def hostile_result() -> AuditResult:
    return build_result(HOSTILE)


def passing_result() -> AuditResult:
    """The estate with every failure fixed: the green page."""
    result = build_result()
    for f in result.findings:
        if f.status == "fail":
            f.status = "pass"
    result.errors = []
    result.inventory.gaps = []
    result.expired_waivers = []
    return result


def large_result(n_vms: int = 10_000, per_host: int = 50) -> AuditResult:
    """An estate with ``n_vms`` VMs, a third of them with a vGPU, and three findings each."""
    n_hosts = max(1, n_vms // per_host)
    clusters, hosts, vms, findings, sims = [], [], [], [], []
    for c in range(0, n_hosts, 10):
        name = f"cluster-{c // 10:03d}"
        clusters.append(Cluster(name, f"domain-c{c}", "DC1", ha_enabled=True))
        sim = ClusterSimulation(
            name,
            hosts=min(10, n_hosts - c),
            tolerates=1,
            worst_host=f"esx{c:04d}.example",
        )
        sims.append(sim)
        for h in range(c, min(c + 10, n_hosts)):
            host_name = f"esx{h:04d}.example"
            gpus = [_gpu(f"0000:{0x17 + g:02x}:00.0", L4, vgpu=True, vms=[]) for g in range(4)]
            hosts.append(
                _host(
                    {"dc": "DC1", "h": host_name, "portgroup": "vMotion"},
                    "h",
                    name,
                    gpus,
                    fc=True,
                    profiles=["grid_l4-2q"],
                    index=h % 250,
                )
            )
            for g in gpus:
                sim.capacity.append(_slots(host_name, g.pci_id, L4, "vgpu", [], "grid_l4-2q", 12))
            sim.failures.append(HostFailure(host_name, 0))
    for i in range(n_vms):
        host = hosts[i % len(hosts)]
        gpu = host.gpus[(i // len(hosts)) % 4] if i % 3 == 0 else None
        vm = Vm(
            f"vm-{i:05d}",
            f"vm-{i}",
            host=host.name,
            cluster=host.cluster,
            datacenter="DC1",
            power_state="poweredOn",
            memory_mb=8192,
            datastores=["fc-ds"],
            gpus=[GpuAttachment("vgpu", "PCI device 0", "grid_l4-2q", True, gpu.pci_id)]
            if gpu
            else [],
        )
        vms.append(vm)
        if gpu:
            gpu.vms.append(vm.name)
        status = "fail" if i % 97 == 0 else "pass"
        severity = ("critical", "high", "medium", "low", "info")[i % 5]
        for rule in ("ST-01", "GPU-01", "HA-03"):
            findings.append(
                Finding(
                    rule,
                    vm.name,
                    "vm",
                    status,
                    severity,
                    f"{rule} on {vm.name}",
                    host.cluster,
                    host.name,
                    evidence={"i": i},
                )
            )
    for sim in sims:
        for slot in sim.capacity:
            gpu = next(
                g for h in hosts if h.name == slot.host for g in h.gpus if g.pci_id == slot.pci_id
            )
            slot.vms = list(gpu.vms)
            slot.used = min(len(gpu.vms), slot.capacity)
        sim.after_worst = [s for s in sim.capacity if s.host != sim.worst_host]
    inventory = Inventory(
        source="vc-large.example",
        collected_at="2026-11-30T08:49:12Z",
        vcenter=VCenter("vc-large.example", "VMware vCenter Server", "8.0.3"),
        datacenters=["DC1"],
        clusters=clusters,
        hosts=hosts,
        vms=vms,
        datastores=[Datastore("fc-ds", "datastore-1", "DC1", "VMFS", 10**8, 10**7, transport="fc")],
    )
    return AuditResult(
        inventory,
        list(RULES),
        findings,
        sims,
        "2026-11-30T08:50:00Z",
        "0.1.0",
        designs={c.name: "B" for c in clusters},
    )


ALL: dict[str, Callable[[], AuditResult]] = {
    "realistic": realistic_result,
    "hostile": hostile_result,
    "passing": passing_result,
}
