"""The rule catalogue, and each rule on plain Inventory objects: the healthy estate passes,
one change fails it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpuaudit.inventory import Gap, Inventory, LunPath, StorageAdapter
from gpuaudit.model.policy import Intent, Policy
from gpuaudit.results import CATEGORIES, SEVERITIES
from gpuaudit.rules import catalogue
from gpuaudit.verdict.check import run_checks
from tests.support.builders import Estate, healthy, passthrough_estate

REQUIRED = [
    *(f"HA-0{i}" for i in range(1, 8)),
    *(f"VM-0{i}" for i in range(1, 7)),
    *(f"GPU-0{i}" for i in range(1, 5)),
    *(f"ST-0{i}" for i in range(1, 6)),
    "DS-01",
    "DS-02",
    "DATA-01",
]


def verdicts(inv: Inventory, rule: str, policy: Policy | None = None) -> dict[str, str]:
    """Object -> status of one rule's findings."""
    result = run_checks(inv, policy)
    assert result.errors == []
    out = {f.object: f.status for f in result.findings if f.rule == rule}
    assert len(out) == len([f for f in result.findings if f.rule == rule]), "one per object"
    return out


def finding(inv: Inventory, rule: str, obj: str, policy: Policy | None = None):  # type: ignore[no-untyped-def]
    result = run_checks(inv, policy)
    return next(f for f in result.findings if f.rule == rule and f.object == obj)


# --- the catalogue ---------------------------------------------------------------------


def test_catalogue_has_every_required_rule_in_id_order() -> None:
    rules = catalogue()
    ids = [r.id for r in rules]
    assert ids == sorted(ids)
    assert len(ids) == len(set(ids))
    assert set(REQUIRED) <= set(ids)
    for rule in rules:
        assert re.fullmatch(r"[A-Z][A-Z0-9]*-\d\d", rule.id)
        assert rule.category in CATEGORIES and rule.severity in SEVERITIES
        assert rule.title and rule.rationale and rule.remediation and rule.object_kind
    assert {r.id: r.severity for r in rules}["GPU-04"] == "info"
    assert {r.id: r.severity for r in rules}["ST-05"] == "info"
    assert {r.id: r.severity for r in rules}["DS-01"] == "info"


def test_rationales_state_the_guidance_and_never_an_unseen_document() -> None:
    by_id = {r.id: r for r in catalogue()}
    assert "if every GPU runs at 100%, no capacity is left" in by_id["HA-06"].rationale
    assert "An HBA has nothing to do with GPUs" in by_id["ST-05"].rationale
    assert "disks must be reachable from every host" in by_id["HA-03"].rationale
    for rule in by_id.values():
        text = f"{rule.title} {rule.rationale} {rule.remediation}".lower()
        assert "seed" not in text, rule.id


def test_healthy_estate_passes_every_rule_but_the_branch_check_it_cannot_prove() -> None:
    result = run_checks(healthy().inv)
    assert result.errors == []
    # Without the vGPU manager version (the Read-only role cannot read it) no ESXi
    # release can be checked against its NVIDIA branch: VM-06 is not proven, not passed.
    assert sorted((f.rule, f.object, f.status) for f in result.findings if f.status != "pass") == [
        ("VM-06", "h1", "unproven"),
        ("VM-06", "h2", "unproven"),
        ("VM-06", "h3", "unproven"),
        # No VgpuMMAutomationTimeoutSecs: maintenance mode evacuates no vGPU VM (Broadcom
        # KB 88271), so no host enters it without stopping its GPU VM.
        ("VM-13", "c1", "fail"),
    ]
    examined = {f.rule for f in result.findings}
    # Every rule that has something to examine in a vGPU + FC SAN cluster.
    assert examined >= set(REQUIRED) - {"ST-02", "GPU-02"}


# --- HA ---------------------------------------------------------------------------------


def test_ha01_ha_off_or_host_monitoring_off() -> None:
    e = healthy()
    assert verdicts(e.inv, "HA-01") == {"c1": "pass"}
    e.inv.clusters[0].ha_host_monitoring = False
    assert verdicts(e.inv, "HA-01") == {"c1": "fail"}
    e.inv.clusters[0].ha_host_monitoring = True
    e.inv.clusters[0].ha_enabled = False
    assert verdicts(e.inv, "HA-01") == {"c1": "fail"}


def test_ha01_ignores_clusters_without_gpu_vms() -> None:
    e = healthy()
    e.cluster("cpu-only", ha=False)
    e.host("cpu1", "cpu-only")
    assert verdicts(e.inv, "HA-01") == {"c1": "pass"}


def test_ha02_admission_control() -> None:
    e = healthy()
    assert verdicts(e.inv, "HA-02") == {"c1": "pass"}
    e.inv.clusters[0].admission_control.enabled = False
    assert verdicts(e.inv, "HA-02") == {"c1": "fail"}


def test_ha03_file_on_a_datastore_only_its_host_reaches() -> None:
    e = healthy()
    h1 = e.inv.hosts[0]
    e.datastore("local-h1", [h1], transport="local")
    e.inv.vms[0].datastores.append("local-h1")
    assert verdicts(e.inv, "HA-03") == {"v1": "fail", "v2": "pass", "v3": "pass"}


def test_ha03_inaccessible_mount_counts_as_missing() -> None:
    e = healthy()
    for mount in e.inv.datastores[0].mounts:
        if mount.host != "h1":
            mount.accessible = False
    assert verdicts(e.inv, "HA-03")["v1"] == "fail"


def test_ha04_fixed_passthrough_fails_dynamic_passes() -> None:
    e = passthrough_estate()
    assert verdicts(e.inv, "HA-04") == {"pv1": "fail", "pv2": "fail"}
    d = Estate()
    d.cluster("dyn")
    hosts = [d.host(f"d{i}", "dyn", profiles=()) for i in (1, 2)]
    gpus = [d.gpu(h, mode="passthrough") for h in hosts]
    d.datastore("nfs", hosts, transport="nfs")
    d.vm("dv1", hosts[0], ["nfs"], dynamic=gpus[0])
    assert verdicts(d.inv, "HA-04") == {"dv1": "pass"}
    assert "Dynamic DirectPath" in finding(e.inv, "HA-04", "pv1").message


def test_ha05_priority_decides_who_gets_the_last_slot() -> None:
    e = Estate()
    e.cluster("cap")
    a, b = e.host("a", "cap"), e.host("b", "cap")
    ga, gb = e.gpu(a), e.gpu(b)
    e.datastore("san", [a, b])
    e.vm("keep", a, ["san"], vgpu="grid_l4-12q", gpu=ga, priority="highest")
    e.vm("drop", a, ["san"], vgpu="grid_l4-12q", gpu=ga, priority="low")
    e.vm("other", b, ["san"], vgpu="grid_l4-12q", gpu=gb)
    assert verdicts(e.inv, "HA-05") == {"keep": "pass", "drop": "fail", "other": "fail"}
    assert "no GPU capacity" in finding(e.inv, "HA-05", "drop").message


def test_ha05_profile_offered_nowhere_else() -> None:
    e = healthy()
    for host in e.inv.hosts[1:]:
        host.vgpu_profiles = [p for p in host.vgpu_profiles if p.name != "grid_l4-8q"]
    e.inv.vms[1].gpus[0].profile = "grid_l4-4q"
    e.inv.vms[2].gpus[0].profile = "grid_l4-4q"
    result = verdicts(e.inv, "HA-05")
    assert result == {"v1": "fail", "v2": "pass", "v3": "pass"}
    assert "does not offer grid_l4-8q" in finding(e.inv, "HA-05", "v1").message


def test_ha06_allocation_above_n_minus_one() -> None:
    e = healthy()
    assert verdicts(e.inv, "HA-06") == {"c1": "pass"}
    for i, host in enumerate(e.inv.hosts, 1):  # 7 x 8q = 7/3 GPUs > 2 GPUs
        for j in range(2 if i < 3 else 1):
            e.vm(f"x{i}{j}", host, ["san1"], vgpu="grid_l4-8q")
    f = finding(e.inv, "HA-06", "c1")
    assert f.status == "fail"
    assert f.evidence["capacity_gpus"] == 3 and f.evidence["limit_gpus"] == 2


def test_ha06_exactly_n_minus_one_passes() -> None:
    e = healthy()
    for i in (1, 2, 3):  # 6 x 8q = 2 GPUs, the limit
        e.vm(f"x{i}", e.inv.hosts[i - 1], ["san1"], vgpu="grid_l4-8q")
    assert verdicts(e.inv, "HA-06") == {"c1": "pass"}


def test_ha07_disabled_restart_priority() -> None:
    e = healthy()
    e.inv.vms[0].restart_priority = "disabled"
    e.inv.clusters[0].restart_priority_overrides["v2"] = "disabled"
    assert verdicts(e.inv, "HA-07") == {"v1": "fail", "v2": "fail", "v3": "pass"}
    e.inv.clusters[0].default_restart_priority = "disabled"
    e.inv.vms[0].restart_priority = "high"
    e.inv.clusters[0].restart_priority_overrides.clear()
    assert verdicts(e.inv, "HA-07") == {"v1": "pass", "v2": "fail", "v3": "fail"}


def test_ha08_cluster_tolerance() -> None:
    assert verdicts(healthy().inv, "HA-08") == {"c1": "pass"}
    assert finding(healthy().inv, "HA-08", "c1").evidence["tolerates"] == 2
    assert verdicts(passthrough_estate().inv, "HA-08") == {"pt": "fail"}


# --- vMotion ----------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "status"), [(True, "pass"), (False, "fail"), (None, "fail")])
def test_vm01_hotmigrate(value: bool | None, status: str) -> None:
    e = healthy()
    e.inv.vcenter.vgpu_hotmigrate_enabled = value
    assert verdicts(e.inv, "VM-01") == {"vCenter": status}


def test_vm01_only_with_vgpu_vms() -> None:
    e = passthrough_estate()
    e.inv.vcenter.vgpu_hotmigrate_enabled = False
    assert verdicts(e.inv, "VM-01") == {}


def test_vm02_profile_offered_by_no_other_host() -> None:
    e = healthy()
    e.inv.hosts[0].vgpu_profiles.append(e.inv.hosts[0].vgpu_profiles[0].__class__("grid_l4-2q"))
    e.inv.vms[0].gpus[0].profile = "grid_l4-2q"
    assert verdicts(e.inv, "VM-02") == {"v1": "fail", "v2": "pass", "v3": "pass"}


def test_vm02_hosts_in_maintenance_or_disconnected_do_not_count() -> None:
    e = healthy()
    e.inv.hosts[1].in_maintenance = True
    e.inv.hosts[2].connection_state = "notResponding"
    assert verdicts(e.inv, "VM-02")["v1"] == "fail"


def test_vm03_mixed_models_lists_the_hosts() -> None:
    e = healthy()
    assert verdicts(e.inv, "VM-03") == {"c1": "pass"}
    e.inv.hosts[2].gpus[0].model = "NVIDIA A10"
    f = finding(e.inv, "VM-03", "c1")
    assert f.status == "fail"
    assert f.evidence["hosts_by_model"] == {"NVIDIA L4": ["h1", "h2"], "NVIDIA A10": ["h3"]}


def test_vm04_host_without_vmotion() -> None:
    e = healthy()
    e.inv.hosts[1].vmotion_nics = []
    assert verdicts(e.inv, "VM-04") == {"h1": "pass", "h2": "fail", "h3": "pass"}


def test_vm05_backing_or_host_says_no_migration() -> None:
    e = healthy()
    e.inv.vms[0].gpus[0].migrate_supported = False
    e.inv.hosts[1].vgpu_profiles[1].migrate_supported = False  # grid_l4-8q on h2
    assert verdicts(e.inv, "VM-05") == {"v1": "fail", "v2": "fail", "v3": "pass"}


@pytest.mark.parametrize(
    ("version", "build", "status"),
    [
        ("6.5.0", "5969303", "fail"),
        ("6.7.0", "8169922", "fail"),
        # Newer than 6.7 U1, but the vGPU manager version, and so its branch, is unknown.
        ("6.7.0", "10302608", "unproven"),
        ("7.0.3", "19193900", "unproven"),
        ("8.0.3", "24022510", "unproven"),
    ],
)
def test_vm06_esxi_version(version: str, build: str, status: str) -> None:
    e = healthy()
    e.inv.hosts[0].version, e.inv.hosts[0].build = version, build
    assert verdicts(e.inv, "VM-06")["h1"] == status


def test_vm06_passes_a_release_its_branch_lists() -> None:
    # vGPU 17 (R550) lists ESXi 7.0 U3 and 8.0 (gpuaudit's table, from NVIDIA's notes).
    e = healthy()
    e.inv.vcenter.version, e.inv.vcenter.build = "8.0.2", "22385739"
    for host in e.inv.hosts:
        host.version, host.build, host.vgpu_manager_version = "7.0.3", "19193900", "550.54.16"
    assert verdicts(e.inv, "VM-06") == {"h1": "pass", "h2": "pass", "h3": "pass"}


def test_vm06_only_hosts_with_vgpu_vms() -> None:
    e = passthrough_estate()
    e.inv.hosts[0].version = "6.0.0"
    assert verdicts(e.inv, "VM-06") == {}


def test_vm07_slow_vmotion_uplink() -> None:
    e = healthy()
    e.inv.hosts[0].vmotion_nics[0].uplink_speed_mbps = 1000
    assert verdicts(e.inv, "VM-07") == {"h1": "fail", "h2": "pass", "h3": "pass"}


# --- GPU --------------------------------------------------------------------------------


def test_gpu01_host_default_shared_or_gpu_not_shared_direct() -> None:
    e = healthy()
    e.inv.hosts[0].default_graphics_type = "shared"
    e.inv.hosts[1].gpus[0].graphics_type = "shared"
    assert verdicts(e.inv, "GPU-01") == {"h1": "fail", "h2": "fail", "h3": "pass"}


def test_gpu02_passthrough_pending_reboot() -> None:
    e = passthrough_estate()
    e.gpu(e.inv.hosts[0], "0000:af:00.0", mode="pending")
    assert verdicts(e.inv, "GPU-02") == {
        "p1/0000:3b:00.0": "pass",
        "p1/0000:af:00.0": "fail",
        "p2/0000:3b:00.0": "pass",
    }


def test_gpu03_memory_not_fully_reserved() -> None:
    e = healthy()
    e.inv.vms[0].memory_reservation_mb = 8192
    e.inv.vms[1].memory_reservation_mb = 0
    e.inv.vms[1].memory_locked_to_max = True
    assert verdicts(e.inv, "GPU-03") == {"v1": "fail", "v2": "pass", "v3": "pass"}


def test_gpu04_idle_gpu_is_reported_as_info() -> None:
    e = passthrough_estate(buffer=True)
    result = verdicts(e.inv, "GPU-04")
    assert result == {
        "p1/0000:3b:00.0": "pass",
        "p2/0000:3b:00.0": "pass",
        "p3/0000:3b:00.0": "fail",
    }
    assert finding(e.inv, "GPU-04", "p3/0000:3b:00.0").severity == "info"


def test_gpu04_gpu_bound_to_a_powered_off_vm_is_not_idle() -> None:
    e = passthrough_estate()
    e.inv.vms[0].power_state = "poweredOff"
    e.inv.hosts[0].gpus[0].vms = []
    assert verdicts(e.inv, "GPU-04")["p1/0000:3b:00.0"] == "pass"


def test_gpu05_unknown_pci_id() -> None:
    e = healthy()
    gpu = e.gpu(e.inv.hosts[0], "0000:af:00.0")
    gpu.device_id, gpu.known_model, gpu.model = 0x9999, False, "Device 9999"
    gpu.graphics_type = "basic"
    result = verdicts(e.inv, "GPU-05")
    assert result["h1/0000:af:00.0"] == "fail" and result["h1/0000:3b:00.0"] == "pass"


# --- storage ----------------------------------------------------------------------------


def test_st01_host_without_online_fc_hba() -> None:
    e = healthy()
    for adapter in e.inv.hosts[2].adapters:
        if adapter.kind == "fc":
            adapter.status = "offline"
    assert verdicts(e.inv, "ST-01") == {"h1": "pass", "h2": "pass", "h3": "fail"}


def test_st01_not_examined_without_fc_storage() -> None:
    assert verdicts(passthrough_estate().inv, "ST-01") == {}


def iscsi_estate() -> Estate:
    e = healthy()
    for host in e.inv.hosts[:2]:
        host.adapters.append(StorageAdapter("vmhba64", "iscsi", iscsi_software=True))
    e.datastore("iscsi1", e.inv.hosts[:2], transport="iscsi")
    return e


def test_st02_cluster_host_without_iscsi_adapter() -> None:
    assert verdicts(iscsi_estate().inv, "ST-02") == {"h1": "pass", "h2": "pass", "h3": "fail"}


def test_st02_standalone_host_reaching_iscsi_without_adapter() -> None:
    e = iscsi_estate()
    lone = e.host("lone", None)
    e.inv.datastores[-1].mounts.append(e.inv.datastores[-1].mounts[0].__class__("lone"))
    assert verdicts(e.inv, "ST-02")["lone"] == "fail"
    lone.adapters.append(StorageAdapter("vmhba64", "iscsi", iscsi_software=True))
    assert verdicts(e.inv, "ST-02")["lone"] == "pass"


def test_st03_datastore_missing_on_a_connected_host() -> None:
    e = healthy()
    assert verdicts(e.inv, "ST-03") == {"san1": "pass"}
    e.inv.datastores[0].mounts[1].mounted = False
    f = finding(e.inv, "ST-03", "san1")
    assert f.status == "fail" and f.evidence["hosts_without_access"] == {"c1": ["h2"]}


def test_st03_disconnected_hosts_are_not_required() -> None:
    e = healthy()
    e.inv.hosts[1].connection_state = "notResponding"
    e.inv.datastores[0].mounts.pop(1)
    assert verdicts(e.inv, "ST-03") == {"san1": "pass"}


def test_st04_single_active_path() -> None:
    e = healthy()
    e.inv.datastores[0].mounts[0].paths[1].state = "dead"
    assert verdicts(e.inv, "ST-04") == {"san1": "fail"}


def test_st04_all_paths_through_one_adapter() -> None:
    e = healthy()
    e.inv.datastores[0].mounts[2].paths = [LunPath("vmhba2", "fc"), LunPath("vmhba2", "fc")]
    assert verdicts(e.inv, "ST-04") == {"san1": "fail"}


def test_st04_software_iscsi_may_use_one_adapter() -> None:
    e = Estate()
    e.cluster("c")
    hosts = [e.host(f"i{n}", "c", fc=0) for n in (1, 2)]
    for h in hosts:
        h.adapters.append(StorageAdapter("vmhba64", "iscsi", iscsi_software=True))
        e.gpu(h)
    ds = e.datastore("iscsi", hosts, transport="iscsi")
    for mount in ds.mounts:
        mount.paths = [LunPath("vmhba64", "iscsi"), LunPath("vmhba64", "iscsi")]
    e.vm("iv", hosts[0], ["iscsi"], vgpu="grid_l4-8q")
    assert verdicts(e.inv, "ST-04") == {"iscsi": "pass"}


def test_st05_fc_hba_without_fc_storage() -> None:
    e = passthrough_estate()
    e.inv.hosts[0].adapters.append(StorageAdapter("vmhba2", "fc", status="online"))
    assert verdicts(e.inv, "ST-05") == {"p1": "fail"}
    assert verdicts(healthy().inv, "ST-05") == {"h1": "pass", "h2": "pass", "h3": "pass"}


# --- design -----------------------------------------------------------------------------


def test_ds01_classifies_a_b_c_and_other() -> None:
    assert run_checks(healthy().inv).designs == {"c1": "B"}
    assert run_checks(passthrough_estate().inv).designs == {"pt": "A"}
    assert run_checks(passthrough_estate(buffer=True).inv).designs == {"pt": "C"}
    e = healthy()
    e.inv.vms[0].gpus[0].kind = "dynamic"
    assert run_checks(e.inv).designs == {"c1": "other"}
    assert verdicts(e.inv, "DS-01") == {"c1": "fail"}
    assert verdicts(healthy().inv, "DS-01") == {"c1": "pass"}


def test_ds01_a_cpu_only_buffer_node_is_still_scenario_a() -> None:
    e = passthrough_estate()
    e.host("cpu", "pt", profiles=(), fc=0)
    assert run_checks(e.inv).designs == {"pt": "A"}


def test_ds01_spare_gpu_makes_c_with_or_without_shared_storage() -> None:
    e = passthrough_estate(buffer=True)
    hosts = e.inv.hosts
    e.datastore("nfs", hosts, transport="nfs")
    for vm in e.inv.vms:
        vm.datastores = ["nfs"]
    assert run_checks(e.inv).designs == {"pt": "C"}
    e.inv.hosts[2].gpus[0].passthrough_active = False  # the spare is not usable
    assert run_checks(e.inv).designs == {"pt": "other"}


def policy(**intent: object) -> Policy:
    return Policy(intent=Intent(**intent))  # type: ignore[arg-type]


def test_ds02_default_intent_accepts_all_three_scenarios() -> None:
    for inv in (healthy().inv, passthrough_estate().inv, passthrough_estate(True).inv):
        assert set(verdicts(inv, "DS-02").values()) == {"pass"}


def test_ds02_stateful_workload_on_local_storage() -> None:
    f = finding(passthrough_estate().inv, "DS-02", "pt", policy(stateless=False))
    assert f.status == "fail" and f.severity == "high"
    assert "stateful" in f.message


def test_ds02_vm_ha_mandated_without_shared_storage() -> None:
    f = finding(passthrough_estate().inv, "DS-02", "pt", policy(vm_ha_mandated=True))
    assert f.status == "fail" and f.severity == "high"
    assert verdicts(healthy().inv, "DS-02", policy(vm_ha_mandated=True)) == {"c1": "pass"}


def test_ds02_near_zero_downtime_needs_active_active() -> None:
    f = finding(healthy().inv, "DS-02", "c1", policy(max_restart_minutes=0.5))
    assert f.status == "fail" and "active-active" in f.message
    ok = policy(max_restart_minutes=0.5, active_active=True)
    assert verdicts(healthy().inv, "DS-02", ok) == {"c1": "pass"}


def test_ds02_vgpu_and_san_on_a_tight_budget_is_over_engineered() -> None:
    f = finding(healthy().inv, "DS-02", "c1", policy(budget_constrained=True))
    assert f.status == "fail" and f.severity == "low"
    assert "vGPU + SAN" in f.message
    shared = policy(budget_constrained=False, gpu_sharing_required=True)
    assert verdicts(healthy().inv, "DS-02", shared) == {"c1": "pass"}


def test_ds02_sharing_required_but_passthrough() -> None:
    f = finding(passthrough_estate().inv, "DS-02", "pt", policy(gpu_sharing_required=True))
    assert f.status == "fail" and f.severity == "medium"


def test_ds02_short_restart_needs_a_buffer_node() -> None:
    short = policy(max_restart_minutes=2)
    assert verdicts(passthrough_estate().inv, "DS-02", short) == {"pt": "fail"}
    assert verdicts(passthrough_estate(buffer=True).inv, "DS-02", short) == {"pt": "pass"}


# --- data -------------------------------------------------------------------------------


def test_data01_gaps_and_disconnected_hosts() -> None:
    e = healthy()
    assert set(verdicts(e.inv, "DATA-01").values()) == {"pass"}
    e.inv.gaps.append(Gap("v2", "VirtualMachine", "config.hardware.device", "NoPermission"))
    e.inv.hosts[2].connection_state = "notResponding"
    result = verdicts(e.inv, "DATA-01")
    assert result == {"h1": "pass", "h2": "pass", "h3": "fail", "v2": "fail"}
    f = finding(e.inv, "DATA-01", "v2")
    assert f.object_kind == "vm" and "NoPermission" in f.message


def test_data01_gap_marks_dependent_findings_uncertain() -> None:
    e = healthy()
    e.inv.gaps.append(Gap("h1", "HostSystem", "config.graphicsInfo", "NoPermission"))
    f = finding(e.inv, "GPU-01", "h1")
    assert f.evidence["uncertain"] == ["config.graphicsInfo: NoPermission"]
    assert "uncertain" in finding(e.inv, "HA-03", "v1").evidence


def test_docs_list_every_rule_with_its_severity_and_title() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "rules.md").read_text("utf-8")
    rows = re.findall(r"^\| ([A-Z][A-Z0-9]*-\d\d) \| (\w+) \| ([\w-]+) \| (.+) \|$", text, re.M)
    assert [(r.id, r.severity, r.object_kind, r.title) for r in catalogue()] == rows
