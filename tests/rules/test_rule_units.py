"""One rule on one object: each per-object rule passes a sound object and fails a broken one.

The expectations follow the rules' meaning in docs/rules.md; the objects come from
tests/support/builders.py. A rule returns None for an object it does not apply to.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import pytest

from gpuaudit.inventory import (
    CounterStats,
    DatastoreMount,
    Gap,
    GpuTelemetry,
    HostTelemetry,
    Inventory,
    Licence,
    StorageAdapter,
    Vm,
)
from gpuaudit.model.policy import Policy
from gpuaudit.model.policy_file import parse_policy
from gpuaudit.results import Rule
from gpuaudit.rules import (
    catalogue,
    data,
    design,
    gpu,
    ha,
    licensing,
    monitoring,
    registry,
    scopes,
    storage,
    vmotion,
)
from gpuaudit.rules.registry import Context, Outcome, RuleSpec, Verdict, Where, rule
from gpuaudit.rules.scopes import DatastoreUse, HostGpu
from gpuaudit.verdict.check import run_checks
from tests.support.builders import Estate, context, healthy, passthrough_estate

T = TypeVar("T")


def judge(
    check: Callable[[Context, T], Outcome | None],
    inv: Inventory,
    obj: T,
    policy: Policy | None = None,
) -> Outcome:
    """The rule's outcome on the object, which it must apply to."""
    outcome = check(context(inv, policy), obj)
    assert outcome is not None, "the rule does not apply to the object"
    return outcome


def first_gpu(inv: Inventory, host: int = 0) -> HostGpu:
    h = inv.hosts[host]
    return HostGpu(h, h.gpus[0])


def test_healthy_estate_is_consistent() -> None:
    inv = healthy().inv
    assert [h.name for h in inv.hosts_in("c1")] == ["h1", "h2", "h3"]
    assert all(h.gpus[0].vms == [f"v{i}"] for i, h in enumerate(inv.hosts, 1))


# --- GPU ----------------------------------------------------------------------------------


def test_gpu01_a_vgpu_host_in_shared_direct_mode_passes() -> None:
    e = healthy()
    assert judge(gpu.shared_direct, e.inv, e.inv.hosts[0]).passed


def test_gpu01_a_vgpu_host_whose_default_is_shared_vsga_fails() -> None:
    e = healthy()
    e.inv.hosts[0].default_graphics_type = "shared"
    assert not judge(gpu.shared_direct, e.inv, e.inv.hosts[0]).passed


def test_gpu01_a_vgpu_vm_on_a_gpu_not_in_shared_direct_mode_fails() -> None:
    e = healthy()
    e.inv.hosts[0].gpus[0].graphics_type = "shared"
    assert not judge(gpu.shared_direct, e.inv, e.inv.hosts[0]).passed


def test_gpu01_does_not_apply_to_a_host_without_vgpu_vms() -> None:
    e = passthrough_estate()
    assert gpu.shared_direct(context(e.inv), e.inv.hosts[0]) is None


def test_gpu02_active_passthrough_passes() -> None:
    e = passthrough_estate()
    outcome = judge(gpu.passthrough_pending, e.inv, first_gpu(e.inv))
    assert outcome.passed and outcome.evidence == {"enabled": True, "active": True}


def test_gpu02_passthrough_enabled_but_not_active_fails() -> None:
    e = Estate()
    h = e.host("r1", None, profiles=(), fc=0)
    e.gpu(h, mode="pending")
    assert not judge(gpu.passthrough_pending, e.inv, first_gpu(e.inv)).passed


def test_gpu02_does_not_apply_to_a_gpu_without_passthrough() -> None:
    e = healthy()
    assert gpu.passthrough_pending(context(e.inv), first_gpu(e.inv)) is None


def test_gpu03_a_vm_with_all_memory_reserved_passes() -> None:
    e = healthy()
    assert judge(gpu.memory_reserved, e.inv, e.inv.vms[0]).passed


def test_gpu03_memory_locked_to_max_passes_without_a_reservation() -> None:
    e = healthy()
    vm = e.inv.vms[0]
    vm.memory_reservation_mb, vm.memory_locked_to_max = 0, True
    assert judge(gpu.memory_reserved, e.inv, vm).passed


def test_gpu03_a_partial_reservation_fails() -> None:
    e = healthy()
    vm = e.inv.vms[0]
    vm.memory_reservation_mb = 8192
    assert not judge(gpu.memory_reserved, e.inv, vm).passed


def test_gpu04_a_gpu_a_vm_uses_passes() -> None:
    e = healthy()
    assert judge(gpu.idle_gpu, e.inv, first_gpu(e.inv)).passed


def test_gpu04_a_gpu_bound_to_a_powered_off_vm_passes() -> None:
    e = Estate()
    h = e.host("p1", None, profiles=(), fc=0)
    g = e.gpu(h, mode="passthrough")
    e.vm("off", h, [], passthrough=g, power="poweredOff")
    assert g.vms == []
    assert judge(gpu.idle_gpu, e.inv, HostGpu(h, g)).passed


def test_gpu04_a_vgpu_gpu_no_vm_uses_fails() -> None:
    e = healthy()
    h1 = e.inv.hosts[0]
    spare = e.gpu(h1, "0000:5e:00.0")
    outcome = judge(gpu.idle_gpu, e.inv, HostGpu(h1, spare))
    assert not outcome.passed and outcome.evidence == {"mode": "vGPU", "vms": []}


def test_gpu04_does_not_apply_to_a_gpu_in_basic_mode() -> None:
    e = Estate()
    h = e.host("b1", None, fc=0)
    e.gpu(h, mode="basic")
    assert gpu.idle_gpu(context(e.inv), first_gpu(e.inv)) is None


def test_gpu05_a_catalogued_gpu_passes() -> None:
    e = healthy()
    assert judge(gpu.unknown_model, e.inv, first_gpu(e.inv)).passed


def test_gpu05_a_gpu_missing_from_the_catalogue_fails() -> None:
    e = healthy()
    e.inv.hosts[0].gpus[0].known_model = False
    outcome = judge(gpu.unknown_model, e.inv, first_gpu(e.inv))
    assert not outcome.passed and outcome.evidence["ids"] == "10de:27b8"


# --- storage ------------------------------------------------------------------------------


def test_st01_a_host_with_an_online_fc_hba_passes() -> None:
    e = healthy()
    assert judge(storage.fc_hba, e.inv, e.inv.hosts[0]).passed


def test_st01_a_host_whose_fc_hbas_are_offline_fails() -> None:
    e = healthy()
    h1 = e.inv.hosts[0]
    for adapter in h1.adapters:
        if adapter.kind == "fc":
            adapter.status = "offline"
    outcome = judge(storage.fc_hba, e.inv, h1)
    assert not outcome.passed
    assert outcome.evidence["hbas"] == {"vmhba2": "offline", "vmhba3": "offline"}


def test_st01_does_not_apply_to_a_host_of_a_cluster_without_fc() -> None:
    e = Estate()
    e.cluster("nfs")
    h = e.host("n1", "nfs", fc=0)
    e.datastore("nas", [h], transport="nfs")
    assert storage.fc_hba(context(e.inv), h) is None


def _iscsi_estate(adapter_on: tuple[str, ...]) -> Estate:
    """Cluster "c" with hosts i1, i2 on an iSCSI datastore; adapters only on ``adapter_on``."""
    e = Estate()
    e.cluster("c")
    hosts = [e.host(name, "c", fc=0) for name in ("i1", "i2")]
    for h in hosts:
        if h.name in adapter_on:
            h.adapters.append(StorageAdapter("vmhba64", "iscsi", iscsi_software=True))
    e.datastore("iscsi1", hosts, transport="iscsi")
    return e


def test_st02_a_host_with_an_iscsi_adapter_passes() -> None:
    e = _iscsi_estate(("i1", "i2"))
    outcome = judge(storage.iscsi_adapter, e.inv, e.inv.hosts[0])
    assert outcome.passed and outcome.evidence["iscsi_adapters"] == ["vmhba64"]


def test_st02_a_host_of_an_iscsi_cluster_without_an_adapter_fails() -> None:
    e = _iscsi_estate(("i1",))
    outcome = judge(storage.iscsi_adapter, e.inv, e.inv.hosts[1])
    assert not outcome.passed and outcome.evidence["iscsi_datastores"] == ["iscsi1"]


def test_st02_a_standalone_host_that_mounts_iscsi_without_an_adapter_fails() -> None:
    e = Estate()
    h = e.host("solo", None, fc=0)
    e.datastore("iscsi1", [h], transport="iscsi")
    assert not judge(storage.iscsi_adapter, e.inv, h).passed


def test_st02_does_not_apply_to_a_host_without_iscsi_storage() -> None:
    e = healthy()
    assert storage.iscsi_adapter(context(e.inv), e.inv.hosts[0]) is None


def test_st03_a_datastore_on_every_host_of_the_cluster_passes() -> None:
    e = healthy()
    assert judge(storage.datastore_everywhere, e.inv, DatastoreUse("san1", ["c1"])).passed


def test_st03_a_datastore_one_host_cannot_access_fails() -> None:
    e = healthy()
    e.inv.datastores[0].mounts[2].accessible = False
    outcome = judge(storage.datastore_everywhere, e.inv, DatastoreUse("san1", ["c1"]))
    assert not outcome.passed
    assert outcome.evidence["hosts_without_access"] == {"c1": ["h3"]}


def test_st04_two_active_paths_through_two_hbas_pass() -> None:
    e = healthy()
    assert judge(storage.multipath, e.inv, e.inv.datastores[0]).passed


def test_st04_a_single_active_path_fails() -> None:
    e = healthy()
    e.inv.datastores[0].mounts[0].paths[1].state = "dead"
    outcome = judge(storage.multipath, e.inv, e.inv.datastores[0])
    assert not outcome.passed and list(outcome.evidence["problems"]) == ["h1"]


def test_st04_all_paths_through_one_hba_fail() -> None:
    e = healthy()
    for path in e.inv.datastores[0].mounts[1].paths:
        path.adapter = "vmhba2"
    outcome = judge(storage.multipath, e.inv, e.inv.datastores[0])
    assert not outcome.passed and list(outcome.evidence["problems"]) == ["h2"]


def test_st04_does_not_apply_to_a_local_datastore() -> None:
    e = Estate()
    h = e.host("l1", None, fc=0)
    ds = e.datastore("local1", [h], transport="local")
    assert storage.multipath(context(e.inv), ds) is None


def test_st05_an_fc_hba_that_serves_an_fc_datastore_passes() -> None:
    e = healthy()
    assert judge(storage.unused_hba, e.inv, e.inv.hosts[0]).passed


def test_st05_an_fc_hba_with_no_fc_datastore_fails() -> None:
    e = Estate()
    h = e.host("f1", None, fc=1)
    e.datastore("local-f1", [h], transport="local")
    outcome = judge(storage.unused_hba, e.inv, h)
    assert not outcome.passed and outcome.evidence["fc_hbas"] == ["vmhba2"]


def test_st05_does_not_apply_to_a_host_without_an_fc_hba() -> None:
    e = Estate()
    h = e.host("b1", None, fc=0)
    assert storage.unused_hba(context(e.inv), h) is None


# --- vMotion ------------------------------------------------------------------------------


def test_vm01_hotmigrate_enabled_passes() -> None:
    e = healthy()
    assert judge(vmotion.hotmigrate, e.inv, e.inv.vcenter).passed


def test_vm01_hotmigrate_not_true_or_unreadable_fails() -> None:
    for value in (False, None):
        e = healthy()
        e.inv.vcenter.vgpu_hotmigrate_enabled = value
        outcome = judge(vmotion.hotmigrate, e.inv, e.inv.vcenter)
        assert not outcome.passed and outcome.evidence["value"] is value


def test_vm01_does_not_apply_without_vgpu_vms_or_on_a_standalone_host() -> None:
    e = passthrough_estate()
    assert vmotion.hotmigrate(context(e.inv), e.inv.vcenter) is None
    e = healthy()
    e.inv.vcenter.api_type = "HostAgent"
    assert vmotion.hotmigrate(context(e.inv), e.inv.vcenter) is None


def test_vm02_a_profile_other_hosts_offer_passes() -> None:
    e = healthy()
    outcome = judge(vmotion.profile_elsewhere, e.inv, e.inv.vms[0])
    assert outcome.passed and outcome.evidence["hosts_offering_count"] == 2


def test_vm02_a_profile_no_other_active_host_offers_fails() -> None:
    e = healthy()
    e.inv.hosts[1].vgpu_profiles = []
    e.inv.hosts[2].in_maintenance = True
    outcome = judge(vmotion.profile_elsewhere, e.inv, e.inv.vms[0])
    assert not outcome.passed and outcome.evidence["hosts_offering_count"] == 0


def test_vm02_does_not_apply_to_a_passthrough_vm() -> None:
    e = passthrough_estate()
    assert vmotion.profile_elsewhere(context(e.inv), e.inv.vms[0]) is None


def test_vm03_one_gpu_model_passes() -> None:
    e = healthy()
    assert judge(vmotion.mixed_models, e.inv, e.inv.clusters[0]).passed


def test_vm03_two_gpu_models_fail() -> None:
    e = healthy()
    e.inv.hosts[2].gpus.clear()
    e.gpu(e.inv.hosts[2], model="a10")
    outcome = judge(vmotion.mixed_models, e.inv, e.inv.clusters[0])
    assert not outcome.passed
    assert outcome.evidence["hosts_by_model"] == {"NVIDIA L4": ["h1", "h2"], "NVIDIA A10": ["h3"]}


def test_vm04_a_host_with_a_vmotion_adapter_passes() -> None:
    e = healthy()
    assert judge(vmotion.vmotion_nic, e.inv, e.inv.hosts[0]).passed


def test_vm04_a_host_without_a_vmotion_adapter_fails() -> None:
    e = healthy()
    e.inv.hosts[0].vmotion_nics.clear()
    assert not judge(vmotion.vmotion_nic, e.inv, e.inv.hosts[0]).passed


def test_vm04_does_not_apply_to_a_host_of_a_cluster_without_gpu_vms() -> None:
    e = Estate()
    e.cluster("cpu")
    h = e.host("c1", "cpu", vmotion=False)
    assert vmotion.vmotion_nic(context(e.inv), h) is None


def test_vm05_a_migratable_vgpu_passes() -> None:
    e = healthy()
    assert judge(vmotion.migrate_supported, e.inv, e.inv.vms[0]).passed


def test_vm05_a_backing_that_says_not_migratable_fails() -> None:
    e = healthy()
    e.inv.vms[0].gpus[0].migrate_supported = False
    assert not judge(vmotion.migrate_supported, e.inv, e.inv.vms[0]).passed


def test_vm05_a_host_that_says_the_profile_is_not_migratable_fails() -> None:
    e = healthy()
    for profile in e.inv.hosts[0].vgpu_profiles:
        profile.migrate_supported = False
    outcome = judge(vmotion.migrate_supported, e.inv, e.inv.vms[0])
    assert not outcome.passed and outcome.evidence["host_migrate_supported"] == [False]


def test_vm06_esxi_8_passes() -> None:
    e = healthy()
    assert judge(vmotion.esxi_version, e.inv, e.inv.hosts[0]).passed


def test_vm06_esxi_6_7_u1_passes_and_older_builds_fail() -> None:
    e = healthy()
    h1 = e.inv.hosts[0]
    h1.version, h1.build = "6.7.0", "10302608"
    assert judge(vmotion.esxi_version, e.inv, h1).passed
    h1.build = "10302607"
    assert not judge(vmotion.esxi_version, e.inv, h1).passed
    h1.version, h1.build = "6.5.0", "20000000"
    assert not judge(vmotion.esxi_version, e.inv, h1).passed


def test_vm07_a_25_gbe_vmotion_uplink_passes() -> None:
    e = healthy()
    assert judge(vmotion.vmotion_speed, e.inv, e.inv.hosts[0]).passed


def test_vm07_a_1_gbe_vmotion_uplink_fails_and_10_gbe_passes() -> None:
    e = healthy()
    h1 = e.inv.hosts[0]
    h1.vmotion_nics[0].uplink_speed_mbps = 1000
    assert not judge(vmotion.vmotion_speed, e.inv, h1).passed
    h1.vmotion_nics[0].uplink_speed_mbps = 10000
    assert judge(vmotion.vmotion_speed, e.inv, h1).passed


def test_vm07_fails_when_the_uplink_speed_is_unknown() -> None:
    e = healthy()
    e.inv.hosts[0].vmotion_nics[0].uplink_speed_mbps = None
    assert not judge(vmotion.vmotion_speed, e.inv, e.inv.hosts[0]).passed


# --- monitoring ---------------------------------------------------------------------------


def _with_telemetry(e: Estate, **counters: float) -> Estate:
    """Telemetry collected over 24 h; h1 reported one counter set for its GPU."""
    e.inv.telemetry.collected, e.inv.telemetry.window_hours = True, 24.0
    h1 = e.inv.hosts[0]
    h1.telemetry = HostTelemetry(status="reported", instances=["gpu0"])
    stats = {name: CounterStats(peak / 2, peak, 288) for name, peak in counters.items()}
    h1.gpus[0].telemetry = GpuTelemetry(instance="gpu0", matched_by="only", **stats)
    return e


def test_mon01_a_host_that_reports_gpu_counters_passes() -> None:
    e = _with_telemetry(healthy(), temperature_c=60)
    outcome = judge(monitoring.counters_reported, e.inv, e.inv.hosts[0])
    assert outcome.passed and outcome.evidence["gpus_without_counters"] == []


def test_mon01_a_host_with_gpus_and_no_counters_fails() -> None:
    e = _with_telemetry(healthy(), temperature_c=60)
    h2 = e.inv.hosts[1]
    h2.telemetry = HostTelemetry(status="none", reason="the host returned no values")
    outcome = judge(monitoring.counters_reported, e.inv, h2)
    assert not outcome.passed and outcome.evidence["gpus_without_counters"] == ["h2/0000:3b:00.0"]


def test_mon01_does_not_apply_without_telemetry_or_without_gpus() -> None:
    e = healthy()
    assert monitoring.counters_reported(context(e.inv), e.inv.hosts[0]) is None
    e = healthy()
    e.inv.telemetry.collected = True
    cpu = e.host("cpu1", "c1")
    assert monitoring.counters_reported(context(e.inv), cpu) is None


def test_mon02_a_peak_at_the_threshold_passes() -> None:
    e = _with_telemetry(healthy(), temperature_c=85)
    outcome = judge(monitoring.temperature, e.inv, first_gpu(e.inv))
    assert outcome.passed and outcome.evidence["limit_c"] == 85


def test_mon02_a_peak_above_the_threshold_fails() -> None:
    e = _with_telemetry(healthy(), temperature_c=86)
    assert not judge(monitoring.temperature, e.inv, first_gpu(e.inv)).passed


def test_mon02_does_not_apply_to_a_gpu_without_a_temperature() -> None:
    e = _with_telemetry(healthy(), utilization_percent=50)
    assert monitoring.temperature(context(e.inv), first_gpu(e.inv)) is None


def test_mon03_a_gpu_that_works_passes() -> None:
    e = _with_telemetry(healthy(), utilization_percent=50)
    assert judge(monitoring.idle, e.inv, first_gpu(e.inv)).passed


def test_mon03_a_gpu_whose_peak_stays_under_the_idle_threshold_fails() -> None:
    e = _with_telemetry(healthy(), utilization_percent=4)
    outcome = judge(monitoring.idle, e.inv, first_gpu(e.inv))
    assert not outcome.passed and outcome.evidence["vms"] == ["v1"]


def test_mon04_a_frame_buffer_used_to_more_than_half_passes() -> None:
    # v1's grid_l4-8q allocates 8192 MB on h1's GPU.
    e = _with_telemetry(healthy(), memory_used_mb=4097)
    outcome = judge(monitoring.framebuffer, e.inv, first_gpu(e.inv))
    assert outcome.passed and outcome.evidence["allocated_mb"] == 8192


def test_mon04_an_allocation_twice_the_peak_use_fails() -> None:
    e = _with_telemetry(healthy(), memory_used_mb=4096)
    assert not judge(monitoring.framebuffer, e.inv, first_gpu(e.inv)).passed


def test_mon04_does_not_apply_to_a_gpu_without_vgpus() -> None:
    e = _with_telemetry(healthy(), memory_used_mb=4096)
    e.inv.hosts[0].gpus[0].vms.clear()
    assert monitoring.framebuffer(context(e.inv), first_gpu(e.inv)) is None


# --- licensing ----------------------------------------------------------------------------


def test_lic01_a_q_profile_needs_the_rtx_virtual_workstation_edition() -> None:
    e = healthy()
    outcome = judge(licensing.edition_needed, e.inv, e.inv.vms[0])
    assert outcome.passed and outcome.evidence["series"] == ["Q"]
    assert "RTX Virtual Workstation" in outcome.evidence["edition"]


def test_lic01_a_profile_that_tells_no_series_fails() -> None:
    e = healthy()
    e.inv.vms[0].gpus[0].profile = "mystery-profile"
    assert not judge(licensing.edition_needed, e.inv, e.inv.vms[0]).passed


def test_lic01_a_passthrough_vm_without_a_declared_edition_states_the_assumption() -> None:
    e = passthrough_estate()
    outcome = judge(licensing.edition_needed, e.inv, e.inv.vms[0])
    assert not outcome.passed and "assumed: no NVIDIA licence" in outcome.message


def _licensed(licence: Licence) -> Estate:
    e = healthy()
    e.inv.licensing.collected = True
    e.inv.hosts[0].licence = licence
    return e


ENTERPRISE_PLUS = "esx.enterprisePlus.cpuPackageCoreLimited"


def test_lic02_an_enterprise_plus_licence_passes() -> None:
    e = _licensed(Licence(edition_key=ENTERPRISE_PLUS, name="vSphere 8 Enterprise Plus"))
    outcome = judge(licensing.host_licence, e.inv, e.inv.hosts[0])
    assert outcome.passed and outcome.evidence["vgpu_vms"] == ["v1"]


def test_lic02_evaluation_mode_fails() -> None:
    e = _licensed(Licence(edition_key="eval", evaluation=True))
    assert not judge(licensing.host_licence, e.inv, e.inv.hosts[0]).passed


def test_lic02_a_licence_expired_before_the_day_of_the_check_fails() -> None:
    # The context's day is 2027-01-15.
    e = _licensed(Licence(edition_key=ENTERPRISE_PLUS, expires="2027-01-14"))
    assert not judge(licensing.host_licence, e.inv, e.inv.hosts[0]).passed


def test_lic02_a_licence_without_shared_passthrough_graphics_fails() -> None:
    e = _licensed(Licence(edition_key="esx.standard.cpuPackage", features={"vmotion": "vMotion"}))
    outcome = judge(licensing.host_licence, e.inv, e.inv.hosts[0])
    assert not outcome.passed and outcome.evidence["vgpu_allowed"] is False


def test_lic02_does_not_apply_when_licences_were_not_read() -> None:
    e = healthy()
    assert licensing.host_licence(context(e.inv), e.inv.hosts[0]) is None


# --- design -------------------------------------------------------------------------------


def test_ds01_vgpu_on_a_shared_datastore_is_design_b() -> None:
    e = healthy()
    outcome = judge(design.scenario, e.inv, e.inv.clusters[0])
    assert outcome.passed and outcome.evidence["scenario"] == "B"


def test_ds01_passthrough_on_local_disks_is_design_a() -> None:
    e = passthrough_estate()
    outcome = judge(design.scenario, e.inv, e.inv.clusters[0])
    assert outcome.passed and outcome.evidence["scenario"] == "A"


def test_ds01_vgpu_on_local_disks_matches_no_design() -> None:
    e = Estate()
    e.cluster("vdi")
    for i in (1, 2):
        h = e.host(f"d{i}", "vdi", fc=0)
        e.gpu(h)
        e.datastore(f"local-d{i}", [h], transport="local")
        e.vm(f"dv{i}", h, [f"local-d{i}"], vgpu="grid_l4-8q")
    outcome = judge(design.scenario, e.inv, e.inv.clusters[0])
    assert not outcome.passed and outcome.evidence["scenario"] == "other"


def test_ds02_the_default_intent_accepts_design_b() -> None:
    e = healthy()
    outcome = judge(design.decision_flow, e.inv, e.inv.clusters[0])
    assert outcome.passed and outcome.severity is None


def test_ds02_a_stateful_workload_on_local_disks_with_ha_off_fails_high() -> None:
    e = passthrough_estate()
    policy = parse_policy("intent:\n  stateless: false\n", rule_ids=[r.id for r in catalogue()])
    outcome = judge(design.decision_flow, e.inv, e.inv.clusters[0], policy)
    assert not outcome.passed
    assert [d["severity"] for d in outcome.evidence["departures"]] == ["high", "medium"]
    assert outcome.severity == "high"


# --- HA -----------------------------------------------------------------------------------


def test_ha01_ha_on_with_host_monitoring_passes() -> None:
    e = healthy()
    assert judge(ha.ha_enabled, e.inv, e.inv.clusters[0]).passed


def test_ha01_ha_off_or_host_monitoring_disabled_fails() -> None:
    e = healthy()
    c1 = e.inv.clusters[0]
    c1.ha_host_monitoring = False
    assert not judge(ha.ha_enabled, e.inv, c1).passed
    c1.ha_host_monitoring, c1.ha_enabled = True, False
    assert not judge(ha.ha_enabled, e.inv, c1).passed


def test_ha02_admission_control_on_passes() -> None:
    e = healthy()
    assert judge(ha.admission_control, e.inv, e.inv.clusters[0]).passed


def test_ha02_admission_control_off_fails() -> None:
    e = healthy()
    e.inv.clusters[0].admission_control.enabled = False
    assert not judge(ha.admission_control, e.inv, e.inv.clusters[0]).passed


def test_ha02_does_not_apply_with_ha_off() -> None:
    e = passthrough_estate()
    assert ha.admission_control(context(e.inv), e.inv.clusters[0]) is None


def test_ha03_files_other_hosts_reach_pass() -> None:
    e = healthy()
    outcome = judge(ha.shared_files, e.inv, e.inv.vms[0])
    # v1 runs on h1; h2 and h3 are the other connected hosts, counted, not listed.
    assert outcome.passed and outcome.evidence == {
        "datastores": ["san1"],
        "pinned": [],
        "other_hosts_count": 2,
    }


def test_ha03_counts_only_the_other_connected_hosts() -> None:
    e = healthy()
    e.inv.hosts[2].connection_state = "disconnected"
    outcome = judge(ha.shared_files, e.inv, e.inv.vms[0])
    assert outcome.passed and outcome.evidence["other_hosts_count"] == 1


def test_ha03_a_file_only_its_host_reaches_fails() -> None:
    e = healthy()
    e.datastore("local-h1", [e.inv.hosts[0]], transport="local")
    e.inv.vms[0].datastores.append("local-h1")
    outcome = judge(ha.shared_files, e.inv, e.inv.vms[0])
    assert not outcome.passed and outcome.evidence["pinned"] == ["local-h1"]


def test_ha04_a_vgpu_vm_passes() -> None:
    e = healthy()
    assert judge(ha.fixed_passthrough, e.inv, e.inv.vms[0]).passed


def test_ha04_a_fixed_directpath_vm_fails() -> None:
    e = passthrough_estate()
    outcome = judge(ha.fixed_passthrough, e.inv, e.inv.vms[0])
    assert not outcome.passed and outcome.evidence["fixed_devices"] == ["0000:3b:00.0"]


def test_ha04_a_dynamic_directpath_vm_passes() -> None:
    e = Estate()
    e.cluster("dyn")
    h = e.host("y1", "dyn", profiles=(), fc=0)
    g = e.gpu(h, mode="passthrough")
    vm = e.vm("dv", h, [], dynamic=g)
    assert judge(ha.fixed_passthrough, e.inv, vm).passed


def test_ha06_one_gpu_allocated_of_three_hosts_passes() -> None:
    e = healthy()
    outcome = judge(ha.n_plus_one, e.inv, e.inv.clusters[0])
    # Three L4s, the largest host has one: the limit is two GPUs.
    assert outcome.passed and outcome.evidence["limit_gpus"] == 2


def test_ha06_allocation_at_the_limit_passes_and_above_it_fails() -> None:
    e = healthy()
    # v1..v3 take 8 GB of a 24 GB L4 each: a third of a GPU; a 24Q takes a whole one.
    e.vm("v4", e.inv.hosts[1], ["san1"], vgpu="grid_l4-24q")
    outcome = judge(ha.n_plus_one, e.inv, e.inv.clusters[0])
    assert outcome.passed and outcome.evidence["allocated_gpus"] == pytest.approx(2, abs=1e-3)
    e.vm("v5", e.inv.hosts[2], ["san1"], vgpu="grid_l4-8q")
    outcome = judge(ha.n_plus_one, e.inv, e.inv.clusters[0])
    assert not outcome.passed
    assert outcome.evidence["allocated_gpus"] == pytest.approx(7 / 3, abs=1e-3)


def test_ha07_a_default_restart_priority_passes() -> None:
    e = healthy()
    assert judge(ha.restart_priority, e.inv, e.inv.vms[0]).passed


def test_ha07_a_disabled_restart_priority_fails() -> None:
    e = healthy()
    e.inv.vms[0].restart_priority = "disabled"
    outcome = judge(ha.restart_priority, e.inv, e.inv.vms[0])
    assert not outcome.passed and outcome.evidence["restart_priority"] == "disabled"


def test_ha07_does_not_apply_to_a_vm_outside_a_cluster() -> None:
    e = Estate()
    h = e.host("solo", None)
    e.gpu(h)
    vm = e.vm("sv", h, [], vgpu="grid_l4-8q")
    assert ha.restart_priority(context(e.inv), vm) is None


# --- data ---------------------------------------------------------------------------------


def test_data02_an_inventory_with_a_host_passes() -> None:
    e = healthy()
    outcome = judge(data.nothing_examined, e.inv, e.inv)
    assert outcome.passed and outcome.evidence["hosts"] == 3


def test_data02_an_inventory_without_hosts_fails_naming_the_refused_objects() -> None:
    inv = Inventory()
    inv.gaps.append(Gap("group-d1", "Folder", "childEntity", "NoPermission"))
    outcome = judge(data.nothing_examined, inv, inv)
    assert not outcome.passed and outcome.evidence["no_permission"] == ["group-d1"]


# --- the runner: scopes offer the objects, the rule judges one ------------------------------


def _interleaved() -> Estate:
    """Hosts listed a1 (cluster A), b1 (B), s1 (no cluster), a2 (A, disconnected), a3 (A)."""
    e = Estate()
    e.cluster("A")
    e.cluster("B")
    for name, cluster in (("a1", "A"), ("b1", "B"), ("s1", None), ("a2", "A"), ("a3", "A")):
        e.host(name, cluster)
    e.inv.hosts[3].connection_state = "disconnected"
    return e


def _names(scope: scopes.Scope[T], inv: Inventory) -> list[str]:
    ctx = context(inv)
    return [scope.locate(ctx, item).object for item in scope.select(ctx)]


def test_host_scopes_select_in_inventory_order_or_cluster_by_cluster() -> None:
    inv = _interleaved().inv
    assert _names(scopes.HOSTS, inv) == ["a1", "b1", "s1", "a2", "a3"]
    assert _names(scopes.CONNECTED_HOSTS, inv) == ["a1", "b1", "s1", "a3"]
    assert _names(scopes.CLUSTER_HOSTS, inv) == ["a1", "a3", "b1"]
    assert _names(scopes.CONNECTED_HOSTS_BY_CLUSTER, inv) == ["a1", "a3", "b1", "s1"]


def test_a_host_is_located_in_its_cluster_and_on_itself() -> None:
    inv = _interleaved().inv
    ctx = context(inv)
    assert scopes.HOSTS.locate(ctx, inv.hosts[0]) == Where("a1", "A", "a1")
    assert scopes.HOSTS.locate(ctx, inv.hosts[2]) == Where("s1", None, "s1")


def test_a_datastore_is_located_in_a_cluster_only_when_one_cluster_uses_it() -> None:
    e = healthy()
    e.cluster("c2")
    h4 = e.host("h4", "c2")
    e.gpu(h4)
    e.inv.datastores[0].mounts.append(DatastoreMount("h4"))  # san1: on c1 and c2
    e.datastore("only-c2", [h4])
    e.vm("v4", h4, ["san1", "only-c2"], vgpu="grid_l4-8q")
    ctx = context(e.inv)
    located = [
        scopes.CLUSTERED_GPU_VM_DATASTORES.locate(ctx, use)
        for use in scopes.CLUSTERED_GPU_VM_DATASTORES.select(ctx)
    ]
    assert located == [Where("only-c2", "c2"), Where("san1", None)]
    assert [
        scopes.GPU_VM_DATASTORES.locate(ctx, ds) for ds in scopes.GPU_VM_DATASTORES.select(ctx)
    ] == [Where("only-c2"), Where("san1")]


def test_the_runner_offers_each_object_and_names_the_verdicts() -> None:
    e = healthy()
    e.gpu(e.inv.hosts[1], "0000:5e:00.0")
    offered: list[str] = []

    def busy(ctx: Context, item: HostGpu) -> Outcome | None:
        offered.append(item.gpu.pci_id)
        if not item.gpu.vms:
            return None
        return Outcome(item.host.name != "h2", "checked", {"vms": item.gpu.vms}, severity="low")

    meta = Rule("GPU-99", "t", "gpu", "info", "r", "m", "gpu")
    spec = RuleSpec(meta, busy, scopes.GPUS)
    assert list(spec.verdicts(context(e.inv))) == [
        Verdict("h1/0000:3b:00.0", True, "checked", {"vms": ["v1"]}, "c1", "h1", "low"),
        Verdict("h2/0000:3b:00.0", False, "checked", {"vms": ["v2"]}, "c1", "h2", "low"),
        Verdict("h3/0000:3b:00.0", True, "checked", {"vms": ["v3"]}, "c1", "h3", "low"),
    ]
    assert offered == ["0000:3b:00.0", "0000:3b:00.0", "0000:5e:00.0", "0000:3b:00.0"]


def test_a_rule_names_either_a_scope_or_an_object_kind() -> None:
    common = dict(
        id="GPU-98", title="t", category="gpu", severity="info", rationale="r", remediation="m"
    )
    with pytest.raises(ValueError, match="either a scope or an object_kind"):
        rule(**common, scope=scopes.GPUS, object_kind="gpu")  # type: ignore[call-overload]
    with pytest.raises(ValueError, match="either a scope or an object_kind"):
        rule(**common)  # type: ignore[call-overload]


def test_what_the_objects_of_a_rule_share_is_worked_out_once_per_audit() -> None:
    ctx = context(healthy().inv)
    calls: list[str] = []

    def compute(key: str) -> str:
        calls.append(key)
        return key.upper()

    assert [ctx.once(("t", k), lambda k=k: compute(k)) for k in ("a", "b", "a")] == ["A", "B", "A"]
    assert calls == ["a", "b"]
    assert context(healthy().inv).once(("t", "a"), lambda: "fresh") == "fresh"


def test_a_per_object_rule_that_raises_on_one_object_is_recorded_and_the_audit_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def fragile(ctx: Context, vm: Vm) -> Outcome:
        if vm.name == "v2":
            raise KeyError("v2")
        return Outcome(True, "fine")

    specs = registry.registered()
    spec = next(s for s in specs if s.rule.id == "GPU-03")
    patched = [RuleSpec(spec.rule, fragile, spec.scope) if s is spec else s for s in specs]
    monkeypatch.setattr("gpuaudit.verdict.check.specs", lambda: patched)
    result = run_checks(healthy().inv)
    assert [(e.rule, e.error) for e in result.errors] == [("GPU-03", "KeyError: 'v2'")]
    assert not any(f.rule == "GPU-03" for f in result.findings)
    assert {f.object for f in result.findings if f.rule == "HA-03"} == {"v1", "v2", "v3"}
