"""The report's tables of a small estate, every header and row written out by hand.

Cluster gpu-a (DC-East) holds esx-01.corp, three GPUs shared by vGPU (two NVIDIA
L40S and an A10 the catalogue does not know), and esx-02.corp, in maintenance,
with an A100 in passthrough. Cluster cpu-b has no host. esx-09.corp stands alone
in DC-West, disconnected. VMs: vdi-1 and vdi-2 (vGPU), train-1 (passthrough),
mixed (two vGPUs and a dynamic device, powered off) and web-1 (no GPU). The
summary names a third cluster, gone-c, that the inventory no longer has.
The summary, the cluster summaries and the failover simulations are written by
hand as the tables receive them, not derived from the inventory: the tables only
place them. Every expected value is read off that data, not computed by the tables.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, date, datetime

import pytest

from gpuaudit.inventory import (
    AdmissionControl,
    Cluster,
    CounterStats,
    Datastore,
    DatastoreMount,
    Gap,
    Gpu,
    GpuAttachment,
    GpuTelemetry,
    Host,
    HostTelemetry,
    Inventory,
    Licence,
    LunPath,
    StorageAdapter,
    VCenter,
    VgpuProfile,
    Vm,
    VmotionNic,
)
from gpuaudit.report.licences import EditionCount, LicenceSummary
from gpuaudit.report.summary import ClusterSummary, Summary
from gpuaudit.report.tables import (
    Table,
    about_table,
    adapters_table,
    clusters_table,
    datastores_table,
    evidence_text,
    failover_table,
    findings_table,
    gaps_table,
    gpus_table,
    hex_id,
    host_licences_table,
    hosts_table,
    inventory_tables,
    licences_table,
    profiles_table,
    summary_table,
    vmotion_table,
    vms_table,
)
from gpuaudit.results import (
    AuditResult,
    ClusterSimulation,
    GpuSlots,
    HostFailure,
    Placement,
    Waiver,
)
from tests.support.small_report import CHECKED_AT, GPU_02, HA_01, small_findings, small_result

NVIDIA = "NVIDIA Corporation"
SCANNED = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)  # "2026-12-01T10:00:00Z"
CHECKED = datetime(2026, 12, 1, 10, 30, tzinfo=UTC)  # CHECKED_AT, 11:30 at UTC+1
REFS = "vSphere HA: https://docs.example/ha\nKB 2: https://kb.example/2"
EN_DASH = "\u2013"


def assert_table(
    table: Table, key: str, title: str, columns: list[tuple[str, str]], rows: list[list]
) -> None:
    assert (table.key, table.title) == (key, title)
    assert [(c.name, c.type) for c in table.columns] == columns
    assert table.rows == rows
    # True == 1 and 1.0 == 1 in Python: the types tell a bool or a float cell apart
    assert [[type(v) for v in r] for r in table.rows] == [[type(v) for v in r] for r in rows]


def row(*parts: list) -> list:
    """One row written in parts, to keep a long row readable."""
    return [value for part in parts for value in part]


def gpus() -> tuple[Gpu, Gpu, Gpu, Gpu]:
    l40s_a = Gpu(
        "0000:3b:00.0",
        0x10DE,
        0x26B9,
        vendor_name=NVIDIA,
        device_name="AD102GL [L40S]",
        model="NVIDIA L40S",
        known_model=True,
        memory_mb=46068,
        passthrough_capable=True,
        graphics_type="sharedDirect",
        vgpu_mode="sameSize",
        vms=["vdi-1", "vdi-2"],
        telemetry=GpuTelemetry(
            instance="0000:3b:00.0",
            utilization_percent=CounterStats(42.5, 97.0, 10),
            memory_used_mb=CounterStats(20480.0, 30720.0, 10),
            memory_usage_percent=CounterStats(44.4, 66.7, 10),
            temperature_c=CounterStats(51.0, 63.0, 10),
            power_w=CounterStats(180.5, 290.0, 10),
        ),
    )
    l40s_b = dataclasses.replace(
        l40s_a,
        pci_id="0000:5e:00.0",
        vms=["vdi-2"],
        # one counter only, and with no peak
        telemetry=GpuTelemetry(utilization_percent=CounterStats(5.0, None, 1)),
    )
    a10 = Gpu(
        "0000:86:00.0",
        0x10DE,
        0x2236,
        vendor_name=NVIDIA,
        device_name="GA102GL [A10]",
        memory_mb=24576,
        passthrough_capable=True,
        graphics_type="sharedDirect",
        vgpu_mode="mixedSize",
        vms=["mixed"],
    )
    a100 = Gpu(
        "0000:af:00.0",
        0x10DE,
        0x20B5,
        vendor_name=NVIDIA,
        device_name="GA100 [A100 PCIe 80GB]",
        model="NVIDIA A100 80GB",
        known_model=True,
        memory_mb=81920,
        passthrough_capable=True,
        passthrough_enabled=True,
        passthrough_active=True,
        vms=["train-1"],
    )
    return l40s_a, l40s_b, a10, a100


def hosts() -> list[Host]:
    l40s_a, l40s_b, a10, a100 = gpus()
    esx01 = Host(
        "esx-01.corp",
        "host-1",
        datacenter="DC-East",
        cluster="gpu-a",
        version="8.0.2",
        build="22380479",
        vendor="Dell Inc.",
        model="PowerEdge R760",
        cpu_cores=64,
        cpu_mhz=2400,
        memory_mb=1048576,
        gpus=[l40s_a, l40s_b, a10],
        vgpu_profiles=[
            VgpuProfile("nvidia_l40s-8q", True, False),
            VgpuProfile("nvidia_l40s-4q", None, True),
        ],
        default_graphics_type="sharedDirect",
        assignment_policy="performance",
        vmotion_nics=[
            VmotionNic("vmk1", "10.0.1.11", "vMotion-A", 25000),
            VmotionNic("vmk2", "10.0.2.11", "vMotion-B", None),
        ],
        adapters=[
            StorageAdapter(
                "vmhba2",
                "fc",
                model="QLE2772",
                driver="qlnativefc",
                status="online",
                port_wwn="21:00:00:24:ff:00:00:01",
                node_wwn="20:00:00:24:ff:00:00:01",
            ),
            StorageAdapter(
                "vmhba64",
                "iscsi",
                model="iSCSI Software Adapter",
                driver="iscsi_vmk",
                status="online",
                iscsi_software=True,
            ),
            StorageAdapter("vmhba0", "sas", model="PERC H755", driver="lsi_mr3", status="unknown"),
            StorageAdapter(
                "vmhba32",
                "fcoe",
                model="QL41262",
                driver="qedf",
                status="offline",
                port_wwn="21:00:00:0e:1e:00:00:03",
                node_wwn="20:00:00:0e:1e:00:00:03",
                iscsi_software=False,
            ),
        ],
        telemetry=HostTelemetry("reported", instances=["0000:3b:00.0", "0000:5e:00.0"]),
        licence=Licence(
            "esx.enterprisePlus.cpuPackageCoreLimited",
            "VMware vSphere 8 Enterprise Plus",
            "4K2QX",
            "2027-06-30",
            False,
            {"vmotion": "vSphere vMotion", "dvs": "Distributed Switch"},
        ),
    )
    esx02 = Host(
        "esx-02.corp",
        "host-2",
        datacenter="DC-East",
        cluster="gpu-a",
        version="8.0.2",
        build="22380479",
        vendor="Dell Inc.",
        model="PowerEdge R750",
        in_maintenance=True,
        cpu_cores=48,
        cpu_mhz=2100,
        memory_mb=524288,
        gpus=[a100],
        adapters=[
            StorageAdapter(
                "vmhba1",
                "fc",
                model="LPe35002",
                driver="lpfc",
                status="online",
                port_wwn="10:00:00:10:9b:00:00:02",
                node_wwn="20:00:00:10:9b:00:00:02",
            )
        ],
        telemetry=HostTelemetry("none", "host did not answer"),
        licence=Licence("eval", "Evaluation Mode", "", None, True, {}),
    )
    esx09 = Host(
        "esx-09.corp",
        "host-9",
        datacenter="DC-West",
        version="7.0.3",
        build="21930508",
        vendor="HPE",
        model="ProLiant DL380 Gen10",
        connection_state="disconnected",
        cpu_cores=32,
        cpu_mhz=2900,
        memory_mb=393216,
        vmotion_nics=[VmotionNic("vmk0", "192.0.2.9", "Management Network", 1000)],
    )
    return [esx01, esx02, esx09]


def vms() -> list[Vm]:
    return [
        Vm(
            "vdi-1",
            "vm-11",
            host="esx-01.corp",
            cluster="gpu-a",
            datacenter="DC-East",
            power_state="poweredOn",
            memory_mb=16384,
            memory_reservation_mb=16384,
            memory_locked_to_max=True,
            datastores=["ds-san-01"],
            restart_priority="high",
            gpus=[GpuAttachment("vgpu", profile="nvidia_l40s-8q", migrate_supported=True)],
        ),
        Vm(
            "vdi-2",
            "vm-12",
            host="esx-01.corp",
            cluster="gpu-a",
            datacenter="DC-East",
            power_state="poweredOn",
            memory_mb=8192,
            memory_reservation_mb=8192,
            datastores=["ds-san-01", "ds-san-02"],
            gpus=[
                GpuAttachment("vgpu", profile="nvidia_l40s-8q", migrate_supported=True),
                GpuAttachment("vgpu", profile="nvidia_l40s-4q", migrate_supported=None),
            ],
        ),
        Vm(
            "train-1",
            "vm-21",
            host="esx-02.corp",
            cluster="gpu-a",
            datacenter="DC-East",
            power_state="poweredOn",
            memory_mb=262144,
            memory_reservation_mb=262144,
            memory_locked_to_max=True,
            datastores=["ds-san-01"],
            gpus=[GpuAttachment("passthrough", pci_id="0000:af:00.0")],
        ),
        Vm(
            "mixed",
            "vm-13",
            host="esx-01.corp",
            cluster="gpu-a",
            datacenter="DC-East",
            memory_mb=32768,
            gpus=[
                GpuAttachment("vgpu", profile="nvidia_a10-4q", migrate_supported=True),
                GpuAttachment("vgpu", profile="nvidia_a10-4q", migrate_supported=False),
                GpuAttachment("dynamic", pci_id="0000:86:00.0"),
            ],
        ),
        Vm(
            "web-1",
            "vm-91",
            host="esx-09.corp",
            datacenter="DC-West",
            memory_mb=4096,
            datastores=["local-09"],
        ),
    ]


def datastores() -> list[Datastore]:
    return [
        Datastore(
            "ds-san-01",
            "datastore-1",
            datacenter="DC-East",
            type="VMFS",
            capacity_mb=3000000,
            free_mb=1000000,
            multiple_host_access=True,
            local=False,
            luns=["naa.600a", "naa.600b"],
            transport="fc",
            mounts=[
                DatastoreMount(
                    "esx-01.corp", paths=[LunPath("vmhba2", "fc"), LunPath("vmhba2", "fc", "dead")]
                ),
                DatastoreMount(
                    "esx-02.corp",
                    accessible=False,
                    paths=[LunPath("vmhba1", "fc", "dead"), LunPath("vmhba1", "fc", "dead")],
                ),
                DatastoreMount("esx-03.corp", mounted=False, paths=[LunPath("vmhba1", "fc")]),
            ],
        ),
        Datastore(
            "local-09",
            "datastore-9",
            datacenter="DC-West",
            type="VMFS",
            local=True,
            mounts=[DatastoreMount("esx-09.corp")],
        ),
    ]


GAPS = [
    Gap("esx-09.corp", "HostSystem", "config.graphicsInfo", "NoPermission", "host-9"),
    Gap("vm-77", "VirtualMachine", "config", "notResponding"),
]


VC_UUID = "5018a5b2-0c1d-4e7f-9a3b-2c4d6e8f0a1b"


def estate_inventory() -> Inventory:
    return Inventory(
        source="vc01.corp.example",
        collected_at="2026-12-01T10:00:00Z",
        vcenter=VCenter(
            name="vc01",
            product="VMware vCenter Server",
            version="8.0.2",
            build="22617221",
            instance_uuid=VC_UUID,
        ),
        datacenters=["DC-East", "DC-West"],
        clusters=[
            Cluster(
                "gpu-a",
                "domain-c1",
                datacenter="DC-East",
                ha_enabled=True,
                ha_host_monitoring=True,
                admission_control=AdmissionControl(True, "resourcePercentage", 1, 25, 30),
                default_restart_priority="high",
                drs_enabled=True,
                drs_automation="fullyAutomated",
            ),
            Cluster("cpu-b", "domain-c2", datacenter="DC-East"),
        ],
        hosts=hosts(),
        datastores=datastores(),
        vms=vms(),
        gaps=list(GAPS),
    )


def simulations() -> list[ClusterSimulation]:
    gpu_a = ClusterSimulation(
        "gpu-a",
        hosts=2,
        gpu_vms=3,
        failures=[
            HostFailure(
                "esx-01.corp",
                displaced=3,
                placed=[Placement("vdi-1", "esx-01.corp", "esx-02.corp")],
                unplaced=[
                    Placement("vdi-2", "esx-01.corp", reason="no free nvidia_l40s-4q slot"),
                    Placement("vdi-9", "esx-01.corp"),
                ],
                manual_only=[
                    Placement("vdi-1", "esx-01.corp", "esx-02.corp", reason="vMotion only"),
                    Placement("vdi-8", "esx-01.corp", "esx-02.corp"),
                ],
            ),
            HostFailure(
                "esx-02.corp",
                displaced=1,
                unplaced=[Placement("train-1", "esx-02.corp", reason="no passthrough GPU free")],
                unproven=[
                    Placement("vdi-4", "esx-02.corp", reason="no maximum published"),
                    Placement("vdi-5", "esx-02.corp"),
                ],
            ),
        ],
        worst_host="esx-01.corp",
        tolerates=0,
        tolerates_unproven=1,
        capacity=[
            GpuSlots("esx-01.corp", "0000:3b:00.0", "NVIDIA L40S", 46068, "vgpu", "8q", 6, 2),
            # more in use than the slots: the free count stops at zero
            GpuSlots("esx-01.corp", "0000:86:00.0", "GA102GL [A10]", 24576, "vgpu", "4q", 1, 2),
        ],
    )
    cpu_b = ClusterSimulation(
        "cpu-b",
        hosts=3,
        failures=[HostFailure("esx-05.corp")],
        tolerates=2,
        capacity=[
            GpuSlots("esx-02.corp", "0000:af:00.0", "NVIDIA A100 80GB", 81920, "passthrough", None)
        ],
    )
    return [gpu_a, cpu_b]


def estate_result() -> AuditResult:
    return AuditResult(
        inventory=estate_inventory(),
        rules=[HA_01, GPU_02],
        findings=small_findings(),
        simulations=simulations(),
        checked_at=CHECKED_AT,
        tool_version="9.9.9",
        rules_version="2026.12.3",
    )


CLUSTER_SUMMARIES = [
    ClusterSummary(
        "gpu-a",
        "DC-East",
        "B",
        simulated=True,
        tolerates=0,
        hosts=2,
        gpu_hosts=2,
        gpus=4,
        gpu_vms=3,
        worst_host="esx-01.corp",
        unplaced_worst=2,
        spare="NVIDIA L40S: 1 idle of 2, N+0",
        failed=3,
        failed_by_severity={"critical": 1, "high": 2, "medium": 0},
    ),
    ClusterSummary("cpu-b", "DC-East", "other", simulated=True, tolerates=1, hosts=5),
    ClusterSummary(
        "gone-c",
        "DC-West",
        None,
        hosts=1,
        gpu_hosts=1,
        gpus=2,
        gpu_vms=1,
        unplaced_worst=4,
        spare="stale",
        failed=1,
        failed_by_severity={"high": 1},
    ),
]

SUMMARY = Summary(
    verdict="fail",
    worst_severity="critical",
    incomplete=True,
    results={"fail": 2, "unproven": 4, "waived": 3, "pass": 1},
    failed_by_severity={"critical": 1, "high": 0, "low": 1},
    failed_by_category={"ha": 1, "gpu": 0, "other": 1},
    clusters=CLUSTER_SUMMARIES,
    gaps=2,
    rule_errors=1,
    waivers_applied=2,
    expired_waivers=0,
    beyond_role=3,
    unproven_by_severity={"high": 3, "medium": 1},
)


# summary_table


def test_summary_table_of_the_estate() -> None:
    assert_table(
        summary_table(estate_result(), SUMMARY),
        "summary",
        "Summary",
        [("Section", "text"), ("Item", "text"), ("Value", "text")],
        [
            # The server as given, as every other sheet names it, and its UUID.
            ["Estate", "vCenter", "vc01.corp.example"],
            ["Estate", "vCenter UUID", VC_UUID],
            ["Estate", "Source", "vc01.corp.example"],
            ["Estate", "Product", "VMware vCenter Server"],
            ["Estate", "Version", "8.0.2"],
            ["Estate", "Build", "22617221"],
            ["Estate", "Scanned (UTC)", SCANNED],
            ["Estate", "Checked (UTC)", CHECKED],
            ["Verdict", "Verdict", "FAIL"],
            ["Verdict", "Worst severity", "critical"],
            ["Verdict", "Incomplete", True],
            ["Verdict", "Fail on", "info"],  # rendered outside a scan: every finding counts
            ["Results", "Failed", 2],
            ["Results", "Notices (info)", 0],
            ["Results", "Not proven", 4],
            ["Results", "Waived", 3],
            ["Results", "Passed", 1],
            ["Failed by severity", "critical", 1],
            ["Failed by severity", "high", 0],
            ["Failed by severity", "low", 1],
            ["Failed by category", "ha", 1],
            ["Failed by category", "gpu", 0],
            ["Failed by category", "other", 1],
            ["Not proven by severity", "high", 3],
            ["Not proven by severity", "medium", 1],
            ["Inventory", "Clusters", 2],
            ["Inventory", "Hosts", 3],
            ["Inventory", "GPUs", 4],
            ["Inventory", "VMs", 5],
            ["Inventory", "GPU VMs", 4],
            ["Inventory", "Datastores", 2],
            # The Data Gaps sheet's rows: 2 that make verdicts uncertain and 3 beyond
            # the Read-only role.
            ["Data", "Data gaps", 5],
            ["Data", "Gaps that make verdicts uncertain", 2],
            ["Data", "Not read by the Read-only role", 3],
            ["Data", "Rule errors", 1],
            ["Cluster N+k", "gpu-a", "N+0"],
            ["Cluster N+k", "cpu-b", "N+1"],
            ["Cluster N+k", "gone-c", EN_DASH],
        ],
    )


def test_summary_table_words_a_verdict_not_proven() -> None:
    summary = dataclasses.replace(SUMMARY, verdict="unproven")
    rows = summary_table(estate_result(), summary).rows
    assert ["Verdict", "Verdict", "NOT PROVEN"] in rows


def test_summary_table_when_nothing_was_examined() -> None:
    """No vCenter UUID, no counts at all, times that are not times."""
    result = AuditResult(
        inventory=Inventory(source="esx-09.corp", collected_at=""),
        rules=[],
        findings=[],
        simulations=[],
        checked_at="yesterday",
    )
    summary = Summary(
        verdict="pass",
        worst_severity=None,
        incomplete=False,
        results={},
        failed_by_severity={},
        failed_by_category={},
        clusters=[],
        gaps=0,
        rule_errors=0,
        waivers_applied=0,
        expired_waivers=0,
        nothing_examined="no host was read",
    )
    assert summary_table(result, summary).rows == [
        ["Verdict", "FAIL: nothing was examined", "No host was read"],
        ["Estate", "vCenter", "esx-09.corp"],
        ["Estate", "vCenter UUID", ""],
        ["Estate", "Source", "esx-09.corp"],
        ["Estate", "Product", ""],
        ["Estate", "Version", ""],
        ["Estate", "Build", ""],
        ["Estate", "Scanned (UTC)", None],
        ["Estate", "Checked (UTC)", "yesterday"],
        ["Verdict", "Verdict", "PASS"],
        ["Verdict", "Worst severity", ""],
        ["Verdict", "Incomplete", False],
        ["Verdict", "Fail on", "info"],
        ["Results", "Failed", 0],
        ["Results", "Notices (info)", 0],
        ["Results", "Not proven", 0],
        ["Results", "Waived", 0],
        ["Results", "Passed", 0],
        ["Inventory", "Clusters", 0],
        ["Inventory", "Hosts", 0],
        ["Inventory", "GPUs", 0],
        ["Inventory", "VMs", 0],
        ["Inventory", "GPU VMs", 0],
        ["Inventory", "Datastores", 0],
        ["Data", "Data gaps", 0],
        ["Data", "Gaps that make verdicts uncertain", 0],
        ["Data", "Not read by the Read-only role", 0],
        ["Data", "Rule errors", 0],
    ]


# clusters_table

CLUSTER_COLUMNS = [
    ("Cluster", "text"),
    ("Datacenter", "text"),
    ("Design", "text"),
    ("Design Name", "text"),
    ("HA", "bool"),
    ("Host Monitoring", "bool"),
    ("Admission Control", "bool"),
    ("AC Policy", "text"),
    ("Failover Level", "int"),
    ("CPU %", "int"),
    ("Mem %", "int"),
    ("Restart Priority", "text"),
    ("DRS", "bool"),
    ("DRS Automation", "text"),
    ("# Hosts", "int"),
    ("# GPU Hosts", "int"),
    ("# GPUs", "int"),
    ("# GPU VMs", "int"),
    ("N+k", "text"),
    ("Tolerates", "int"),
    ("Worst Host", "text"),
    ("Unplaced (Worst)", "int"),
    ("Spare per Model", "text"),
    ("Failed", "int"),
    ("Critical", "int"),
    ("High", "int"),
]


def test_clusters_table() -> None:
    assert_table(
        clusters_table(estate_result(), SUMMARY),
        "clusters",
        "Clusters",
        CLUSTER_COLUMNS,
        [
            # the row of the first cluster's settings, HA and DRS on
            [
                "gpu-a",
                "DC-East",
                "B",
                "VMware HA with SAN and vGPU",
                True,
                True,
                True,
                "resourcePercentage",
                1,
                25,
                30,
                "high",
                True,
                "fullyAutomated",
                2,
                2,
                4,
                3,
                "N+0",
                0,
                "esx-01.corp",
                2,
                "NVIDIA L40S: 1 idle of 2, N+0",
                3,
                1,
                2,
            ],
            # a cluster with every setting at its default, no failed finding
            [
                "cpu-b",
                "DC-East",
                "other",
                "Mixed or unclassified",
                False,
                False,
                False,
                None,
                None,
                None,
                None,
                "medium",
                False,
                None,
                5,
                0,
                0,
                0,
                "N+1",
                1,
                None,
                0,
                "",
                0,
                0,
                0,
            ],
            # gone from the inventory, not simulated, not classified: its settings are unknown
            row(
                ["gone-c", "DC-West", None, ""],
                [None] * 10,
                [1, 1, 2, 1, None, None, None, None, None, 1, 0, 1],
            ),
        ],
    )


# gpus_table

GPU_COLUMNS = [
    ("Host", "text"),
    ("Cluster", "text"),
    ("PCI ID", "text"),
    ("Vendor", "text"),
    ("Model", "text"),
    ("Known Model", "bool"),
    ("Device Name", "text"),
    ("Vendor ID", "text"),
    ("Device ID", "text"),
    ("Memory MB", "int"),
    ("Graphics Type", "text"),
    ("vGPU Mode", "text"),
    ("Passthru Capable", "bool"),
    ("Passthru Enabled", "bool"),
    ("Passthru Active", "bool"),
    ("Use", "text"),
    ("Profile", "text"),
    ("Slots", "int"),
    ("Used", "int"),
    ("Free", "int"),
    ("VMs", "text"),
    ("Util Avg %", "float"),
    ("Util Peak %", "float"),
    ("Mem Used Avg MB", "float"),
    ("Mem Used Peak MB", "float"),
    ("Mem Avg %", "float"),
    ("Mem Peak %", "float"),
    ("Temp Avg C", "float"),
    ("Temp Peak C", "float"),
    ("Power Avg W", "float"),
    ("Power Peak W", "float"),
]


def test_gpus_table() -> None:
    l40s = ["NVIDIA Corporation", "NVIDIA L40S", True, "AD102GL [L40S]", "0x10de", "0x26b9"]
    shared = [46068, "sharedDirect", "sameSize", True, False, False]
    assert_table(
        gpus_table(estate_result()),
        "gpus",
        "GPUs",
        GPU_COLUMNS,
        [
            row(
                ["esx-01.corp", "gpu-a", "0000:3b:00.0", *l40s, *shared],
                ["vgpu", "8q", 6, 2, 4, "vdi-1, vdi-2"],
                [42.5, 97.0, 20480.0, 30720.0, 44.4, 66.7, 51.0, 63.0, 180.5, 290.0],
            ),
            # no simulation holds this GPU: its use is unknown
            row(
                ["esx-01.corp", "gpu-a", "0000:5e:00.0", *l40s, *shared],
                [None, None, None, None, None, "vdi-2"],
                [5.0],
                [None] * 9,
            ),
            row(
                ["esx-01.corp", "gpu-a", "0000:86:00.0", "NVIDIA Corporation", "", False],
                ["GA102GL [A10]", "0x10de", "0x2236", 24576, "sharedDirect", "mixedSize"],
                [True, False, False, "vgpu", "4q", 1, 2, 0, "mixed"],
                [None] * 10,
            ),
            row(
                ["esx-02.corp", "gpu-a", "0000:af:00.0", "NVIDIA Corporation", "NVIDIA A100 80GB"],
                [True, "GA100 [A100 PCIe 80GB]", "0x10de", "0x20b5", 81920, None, None],
                [True, True, True, "passthrough", None, 1, 0, 1, "train-1"],
                [None] * 10,
            ),
        ],
    )


def test_gpus_table_of_an_estate_without_gpus() -> None:
    result = dataclasses.replace(
        estate_result(), inventory=Inventory(hosts=[Host("esx-09.corp", "host-9")])
    )
    assert_table(gpus_table(result), "gpus", "GPUs", GPU_COLUMNS, [])


def test_hex_id() -> None:
    assert hex_id(None) == ""
    assert hex_id(0x1B) == "0x001b"
    assert hex_id(0x10DE) == "0x10de"
    # pyVmomi reads PCI ids as signed 16-bit numbers: 0xffff arrives as -1
    assert hex_id(-1) == "0xffff"
    assert hex_id(0x110DE) == "0x10de"


# findings_table

FINDING_COLUMNS = [
    ("Status", "text"),
    ("Severity", "text"),
    ("Rule", "text"),
    ("Category", "text"),
    ("Title", "text"),
    ("Object", "text"),
    ("Kind", "text"),
    ("Cluster", "text"),
    ("Host", "text"),
    ("Message", "text"),
    ("Evidence", "text"),
    ("Remediation", "text"),
    ("Waiver Reason", "text"),
    ("Waiver Owner", "text"),
    ("Waiver Expires", "date"),
    ("References", "text"),
]


def test_findings_table_with_ages() -> None:
    """small_result's findings; HA-01 on gpu-a was first seen 30 days and 10.5 hours ago."""
    assert_table(
        findings_table(small_result()),
        "findings",
        "Findings",
        [*FINDING_COLUMNS, ("Age (days)", "int")],
        [
            row(
                ["fail", "critical", "HA-01", "ha", "HA is on", "gpu-a", "cluster", "gpu-a", None],
                ["HA is off", '{"ha_enabled": false}', "Turn HA on.", None, None, None, REFS, 30],
            ),
            row(
                ["waived", "medium", "GPU-02", "gpu", "Profiles fit", "vdi 1/a%", "vm", "gpu-a"],
                ["esx-01.corp", "", "", "", "CAB-7", "ops", date(2027, 1, 31), "", None],
            ),
            row(
                ["pass", "critical", "HA-01", "ha", "HA is on", "gpu-b", "cluster", "gpu-b", None],
                ["HA is on", "", "Turn HA on.", None, None, None, REFS, None],
            ),
            # a rule the catalogue does not know: no category, title, remediation, references
            row(
                ["fail", "low", "X-99", "", "", "esx-09.corp", "host", None, "esx-09.corp", "odd"],
                ["", "", None, None, None, "", None],
            ),
            row(
                ["waived", "high", "GPU-02", "gpu", "Profiles fit", "..", "vm", None, None, "dots"],
                ["", "", None, None, None, "", None],
            ),
        ],
    )


def test_findings_table_without_history_has_no_age_column() -> None:
    result = dataclasses.replace(small_result(), findings=small_findings()[3:4], first_seen={})
    assert_table(
        findings_table(result),
        "findings",
        "Findings",
        FINDING_COLUMNS,
        [
            row(
                ["fail", "low", "X-99", "", "", "esx-09.corp", "host", None, "esx-09.corp", "odd"],
                ["", "", None, None, None, ""],
            )
        ],
    )


def test_findings_table_waiver_dates_that_are_not_dates() -> None:
    bad = Waiver("GPU-02", "vdi*", "CAB-7", "ops", "end of Q1")
    none = Waiver("GPU-02", "vdi*", "CAB-8", "ops", "")
    waived = small_findings()[1]
    findings = [dataclasses.replace(waived, waiver=bad), dataclasses.replace(waived, waiver=none)]
    table = findings_table(dataclasses.replace(small_result(), findings=findings))
    assert [r[12:15] for r in table.rows] == [["CAB-7", "ops", "end of Q1"], ["CAB-8", "ops", None]]


def test_findings_age_is_zero_when_a_time_cannot_be_read() -> None:
    result = dataclasses.replace(small_result(), checked_at="not a time")
    assert [r[-1] for r in findings_table(result).rows] == [0, None, None, None, None]


def test_evidence_text() -> None:
    assert evidence_text({}) == ""
    # keys sorted, text kept as it is, a value JSON cannot hold written as text
    assert (
        evidence_text({"zone": "Zürich", "at": date(2026, 1, 2), "n": 1})
        == '{"at": "2026-01-02", "n": 1, "zone": "Zürich"}'
    )


# hosts_table


def test_hosts_table() -> None:
    assert_table(
        hosts_table(estate_inventory()),
        "hosts",
        "Hosts",
        [
            ("Host", "text"),
            ("Cluster", "text"),
            ("Datacenter", "text"),
            ("Version", "text"),
            ("Build", "text"),
            ("Vendor", "text"),
            ("Model", "text"),
            ("Connection State", "text"),
            ("Maintenance", "bool"),
            ("# Cores", "int"),
            ("CPU MHz", "int"),
            ("Memory MB", "int"),
            ("# GPUs", "int"),
            ("GPU Models", "text"),
            ("Graphics Type", "text"),
            ("Assignment Policy", "text"),
            ("# vGPU Profiles", "int"),
            ("# vMotion NICs", "int"),
            ("# HBAs", "int"),
        ],
        [
            row(
                ["esx-01.corp", "gpu-a", "DC-East", "8.0.2", "22380479", "Dell Inc."],
                ["PowerEdge R760", "connected", False, 64, 2400, 1048576, 3],
                # an unknown model is named by the device; the SAS controller is no HBA
                ["2x NVIDIA L40S, 1x GA102GL [A10]", "sharedDirect", "performance", 2, 2, 3],
            ),
            row(
                ["esx-02.corp", "gpu-a", "DC-East", "8.0.2", "22380479", "Dell Inc."],
                ["PowerEdge R750", "connected", True, 48, 2100, 524288, 1],
                ["1x NVIDIA A100 80GB", None, None, 0, 0, 1],
            ),
            row(
                ["esx-09.corp", None, "DC-West", "7.0.3", "21930508", "HPE"],
                ["ProLiant DL380 Gen10", "disconnected", False, 32, 2900, 393216, 0],
                ["", None, None, 0, 1, 0],
            ),
        ],
    )


# vms_table

VM_COLUMNS = [
    ("VM", "text"),
    ("Powerstate", "text"),
    ("Host", "text"),
    ("Cluster", "text"),
    ("Datacenter", "text"),
    ("Memory MB", "int"),
    ("Reservation MB", "int"),
    ("Mem Locked", "bool"),
    ("Restart Priority", "text"),
    ("# GPUs", "int"),
    ("GPU Kind", "text"),
    ("vGPU Profile", "text"),
    ("PCI ID", "text"),
    ("vGPU vMotion", "bool"),
    ("Datastores", "text"),
]
GPU_VM_ROWS = [
    row(
        ["vdi-1", "poweredOn", "esx-01.corp", "gpu-a", "DC-East", 16384, 16384, True, "high", 1],
        ["vgpu", "nvidia_l40s-8q", "", True, "ds-san-01"],
    ),
    # one vGPU whose vMotion support is not reported: unknown for the VM
    row(
        ["vdi-2", "poweredOn", "esx-01.corp", "gpu-a", "DC-East", 8192, 8192, False, None, 2],
        ["vgpu", "nvidia_l40s-8q, nvidia_l40s-4q", "", None, "ds-san-01, ds-san-02"],
    ),
    # passthrough only: vGPU vMotion does not apply
    row(
        ["train-1", "poweredOn", "esx-02.corp", "gpu-a", "DC-East", 262144, 262144, True, None, 1],
        ["passthrough", "", "0000:af:00.0", None, "ds-san-01"],
    ),
    # one vGPU of two cannot move: the VM cannot
    row(
        ["mixed", "poweredOff", "esx-01.corp", "gpu-a", "DC-East", 32768, 0, False, None, 3],
        ["dynamic, vgpu", "nvidia_a10-4q, nvidia_a10-4q", "0000:86:00.0", False, ""],
    ),
]


def test_vms_table() -> None:
    web = ["web-1", "poweredOff", "esx-09.corp", None, "DC-West", 4096, 0, False, None, 0]
    web += ["", "", "", None, "local-09"]
    assert_table(vms_table(estate_inventory()), "vms", "VMs", VM_COLUMNS, [*GPU_VM_ROWS, web])


def test_gpu_vms_table() -> None:
    assert_table(
        vms_table(estate_inventory(), gpu_only=True), "gpu-vms", "GPU VMs", VM_COLUMNS, GPU_VM_ROWS
    )


# about_table


def test_about_table_with_a_policy() -> None:
    result = dataclasses.replace(
        small_result(),
        policy_source="site-policy.yaml",
        waivers=[
            Waiver("GPU-02", "vdi*", "CAB-7", "ops", "2027-01-31"),
            Waiver("HA-01", "gpu-*", "migration", "infra", "2027-03-01"),
        ],
        expired_waivers=[Waiver("DS-01", "*", "old", "ops", "2026-10-01")],
    )
    result.inventory.vcenter.instance_uuid = VC_UUID
    assert_table(
        about_table(result, 7),
        "about",
        "About",
        [("Item", "text"), ("Value", "text")],
        [
            ["Tool", "gpuaudit"],
            ["Tool Version", "9.9.9"],
            ["Report Schema", 7],
            ["Rules Version", "2026.12.3"],
            ["Rules", 2],
            ["Scan Time (UTC)", SCANNED],
            ["Check Time (UTC)", CHECKED],
            ["Source", "vc01.corp.example"],
            ["vCenter UUID", VC_UUID],
            ["Inventory Schema", 2],
            ["Policy", "site-policy.yaml"],
            ["Waivers In Policy", 2],
            ["Waivers Applied", 2],
            ["Expired Waivers", 1],
            ["Waiver", "GPU-02 vdi*: CAB-7 (ops, until 2027-01-31)"],
            ["Waiver", "HA-01 gpu-*: migration (infra, until 2027-03-01)"],
            ["Expired Waiver", "DS-01 *: old (ops, ended 2026-10-01)"],
            ["Rule Error", "DS-01: KeyError: 'x'"],
        ],
    )


def test_about_table_without_a_policy() -> None:
    result = AuditResult(
        inventory=Inventory(source="esx-09.corp"),
        rules=[],
        findings=small_findings()[:1],
        simulations=[],
        tool_version="1.0.0",
        rules_version="2026.1.1",
    )
    assert about_table(result, 3).rows == [
        ["Tool", "gpuaudit"],
        ["Tool Version", "1.0.0"],
        ["Report Schema", 3],
        ["Rules Version", "2026.1.1"],
        ["Rules", 0],
        ["Scan Time (UTC)", None],
        ["Check Time (UTC)", None],
        ["Source", "esx-09.corp"],
        ["vCenter UUID", ""],
        ["Inventory Schema", 2],
        ["Policy", ""],
        ["Waivers In Policy", 0],
        ["Waivers Applied", 0],
        ["Expired Waivers", 0],
    ]


# datastores_table


def test_datastores_table() -> None:
    assert_table(
        datastores_table(estate_inventory()),
        "datastores",
        "Datastores",
        [
            ("Datastore", "text"),
            ("Datacenter", "text"),
            ("Type", "text"),
            ("Transport", "text"),
            ("Capacity MB", "int"),
            ("Free MB", "int"),
            ("Free %", "float"),
            ("Multi Host", "bool"),
            ("Local", "bool"),
            ("# Hosts", "int"),
            ("# Inaccessible", "int"),
            ("# Dead Paths", "int"),
            ("Hosts", "text"),
            ("LUNs", "text"),
        ],
        [
            # a third free is 33.3%; esx-03 lists the datastore but has it unmounted
            row(
                [
                    "ds-san-01",
                    "DC-East",
                    "VMFS",
                    "fc",
                    3000000,
                    1000000,
                    33.3,
                    True,
                    False,
                    2,
                    1,
                    3,
                ],
                ["esx-01.corp, esx-02.corp, esx-03.corp", "naa.600a, naa.600b"],
            ),
            # no capacity reported: no percentage
            row(
                ["local-09", "DC-West", "VMFS", "other", 0, 0, None, None, True, 1, 0, 0],
                ["esx-09.corp", ""],
            ),
        ],
    )


def test_datastore_free_percent_rounds_to_one_decimal() -> None:
    inv = Inventory(datastores=[Datastore("d", "ds-1", capacity_mb=8, free_mb=1)])
    assert datastores_table(inv).rows[0][6] == 12.5
    inv = Inventory(datastores=[Datastore("d", "ds-1", capacity_mb=3, free_mb=2)])
    assert datastores_table(inv).rows[0][6] == 66.7


# host_licences_table


def test_host_licences_table() -> None:
    assert_table(
        host_licences_table(estate_inventory()),
        "host-licences",
        "Host Licences",
        [
            ("Host", "text"),
            ("Cluster", "text"),
            ("Edition", "text"),
            ("Licence", "text"),
            ("Key Ends", "text"),
            ("Expires", "date"),
            ("Evaluation", "bool"),
            ("Features", "text"),
            ("GPU Counters", "text"),
            ("Counter Note", "text"),
        ],
        [
            row(
                ["esx-01.corp", "gpu-a", "esx.enterprisePlus.cpuPackageCoreLimited"],
                ["VMware vSphere 8 Enterprise Plus", "4K2QX", date(2027, 6, 30), False],
                ["dvs, vmotion", "reported", ""],
            ),
            row(
                ["esx-02.corp", "gpu-a", "eval", "Evaluation Mode", "", None, True, ""],
                ["none", "host did not answer"],
            ),
            ["esx-09.corp", None, None, None, None, None, None, None, None, None],
        ],
    )


def test_host_licence_expiry_that_is_not_a_date() -> None:
    inv = Inventory(hosts=[Host("h", "host-1", licence=Licence(expires="never"))])
    assert host_licences_table(inv).rows[0][5] == "never"


# failover_table


def test_failover_table() -> None:
    assert_table(
        failover_table(estate_result()),
        "failover",
        "Failover Simulation",
        [
            ("Cluster", "text"),
            ("# Hosts", "int"),
            ("Failed Host", "text"),
            ("Worst", "bool"),
            ("Displaced", "int"),
            ("Placed", "int"),
            ("Unplaced", "int"),
            ("Unplaced VMs", "text"),
            ("Manual Only", "int"),
            ("Manual Only VMs", "text"),
            ("Not Proven", "int"),
            ("Not Proven VMs", "text"),
            ("N+k", "text"),
        ],
        [
            row(
                ["gpu-a", 2, "esx-01.corp", True, 3, 1, 2],
                ["vdi-2 (no free nvidia_l40s-4q slot); vdi-9", 2, "vdi-1 (vMotion only); vdi-8"],
                [0, "", "N+0 (up to N+1 not proven)"],
            ),
            row(
                ["gpu-a", 2, "esx-02.corp", False, 1, 0, 1, "train-1 (no passthrough GPU free)", 0],
                ["", 2, "vdi-4 (no maximum published); vdi-5", "N+0 (up to N+1 not proven)"],
            ),
            ["cpu-b", 3, "esx-05.corp", False, 0, 0, 0, "", 0, "", 0, "", "N+2"],
        ],
    )


# adapters_table


def test_adapters_table() -> None:
    assert_table(
        adapters_table(estate_inventory()),
        "adapters",
        "Adapters",
        [
            ("Host", "text"),
            ("Cluster", "text"),
            ("Device", "text"),
            ("Type", "text"),
            ("Model", "text"),
            ("Driver", "text"),
            ("Status", "text"),
            ("Port WWN", "text"),
            ("Node WWN", "text"),
            ("SW iSCSI", "bool"),
        ],
        [
            row(
                ["esx-01.corp", "gpu-a", "vmhba2", "fc", "QLE2772", "qlnativefc", "online"],
                ["21:00:00:24:ff:00:00:01", "20:00:00:24:ff:00:00:01", None],
            ),
            row(
                ["esx-01.corp", "gpu-a", "vmhba64", "iscsi", "iSCSI Software Adapter", "iscsi_vmk"],
                ["online", None, None, True],
            ),
            row(
                ["esx-01.corp", "gpu-a", "vmhba0", "sas", "PERC H755", "lsi_mr3", "unknown"],
                [None, None, None],
            ),
            row(
                ["esx-01.corp", "gpu-a", "vmhba32", "fcoe", "QL41262", "qedf", "offline"],
                ["21:00:00:0e:1e:00:00:03", "20:00:00:0e:1e:00:00:03", False],
            ),
            row(
                ["esx-02.corp", "gpu-a", "vmhba1", "fc", "LPe35002", "lpfc", "online"],
                ["10:00:00:10:9b:00:00:02", "20:00:00:10:9b:00:00:02", None],
            ),
        ],
    )


# licences_table

PASSTHROUGH_NOTE = (
    "Passthrough GPU VMs count under the edition the policy declares for their guests' "
    "NVIDIA driver (licensing.passthrough)."
)


def test_licences_table() -> None:
    summary = dataclasses.replace(
        SUMMARY,
        licences=LicenceSummary(
            rows=[
                EditionCount("NVIDIA RTX Virtual Workstation", "gpu-a", 2, 3),
                EditionCount("NVIDIA AI Enterprise", "gpu-a", 1, 4, 1),
            ],
            totals={"NVIDIA AI Enterprise": 1, "NVIDIA RTX Virtual Workstation": 2},
            total=3,
            passthrough_vms=5,
        ),
    )
    assert_table(
        licences_table(summary),
        "licences",
        "Licences",
        [
            ("Scope", "text"),
            ("Edition", "text"),
            ("Powered-on VMs", "int"),
            ("Registered VMs", "int"),
        ],
        [
            ["gpu-a", "NVIDIA RTX Virtual Workstation", 2, 3],
            ["gpu-a", "NVIDIA AI Enterprise", 1, 4],
            ["Total", "NVIDIA AI Enterprise", 1, None],
            ["Total", "NVIDIA RTX Virtual Workstation", 2, None],
            ["Total", "All editions", 3, None],
            ["Passthrough", PASSTHROUGH_NOTE, None, 5],
        ],
    )


def test_licences_table_without_gpu_vms() -> None:
    assert licences_table(SUMMARY).rows == [
        ["Total", "All editions", 0, None],
        ["Passthrough", PASSTHROUGH_NOTE, None, 0],
    ]


# vmotion_table, profiles_table, gaps_table


def test_vmotion_table() -> None:
    assert_table(
        vmotion_table(estate_inventory()),
        "vmotion",
        "vMotion Network",
        [
            ("Host", "text"),
            ("Cluster", "text"),
            ("Device", "text"),
            ("IP", "text"),
            ("Portgroup", "text"),
            ("Uplink Mbps", "int"),
        ],
        [
            ["esx-01.corp", "gpu-a", "vmk1", "10.0.1.11", "vMotion-A", 25000],
            ["esx-01.corp", "gpu-a", "vmk2", "10.0.2.11", "vMotion-B", None],
            ["esx-09.corp", None, "vmk0", "192.0.2.9", "Management Network", 1000],
        ],
    )


def test_profiles_table() -> None:
    assert_table(
        profiles_table(estate_inventory()),
        "profiles",
        "vGPU Profiles",
        [
            ("Host", "text"),
            ("Cluster", "text"),
            ("Profile", "text"),
            ("vMotion", "bool"),
            ("Suspend", "bool"),
        ],
        [
            ["esx-01.corp", "gpu-a", "nvidia_l40s-8q", True, False],
            ["esx-01.corp", "gpu-a", "nvidia_l40s-4q", None, True],
        ],
    )


def test_gaps_table() -> None:
    assert_table(
        gaps_table(estate_inventory()),
        "gaps",
        "Data Gaps",
        [
            ("Object", "text"),
            ("Kind", "text"),
            ("Property", "text"),
            ("Reason", "text"),
            ("MoRef", "text"),
        ],
        [
            ["esx-09.corp", "HostSystem", "config.graphicsInfo", "NoPermission", "host-9"],
            ["vm-77", "VirtualMachine", "config", "notResponding", ""],
        ],
    )


# inventory_tables, Table.column_index


def test_inventory_tables_in_order() -> None:
    result = estate_result()
    inv = result.inventory
    tables = inventory_tables(result)
    assert [t.key for t in tables] == [
        "hosts",
        "gpus",
        "profiles",
        "gpu-vms",
        "datastores",
        "adapters",
        "vmotion",
        "failover",
        "host-licences",
        "gaps",
    ]
    # each section is the table its own test pins
    assert tables == [
        hosts_table(inv),
        gpus_table(result),
        profiles_table(inv),
        vms_table(inv, gpu_only=True),
        datastores_table(inv),
        adapters_table(inv),
        vmotion_table(inv),
        failover_table(result),
        host_licences_table(inv),
        gaps_table(inv),
    ]


def test_column_index() -> None:
    table = hosts_table(estate_inventory())
    assert table.column_index("Host") == 0
    assert table.column_index("Cluster") == 1
    assert table.column_index("# HBAs") == 18
    with pytest.raises(ValueError):
        table.column_index("No Such Column")
