"""What-if changes (gpuaudit.plan.whatif) on builder estates, with the arithmetic written out.

NVIDIA's vGPU user guide (A.1, "Virtual GPU Types for NVIDIA L4") allows 3 L4-8Q and 1
L4-24Q per GPU: that is all the sharing arithmetic below uses.
"""

from __future__ import annotations

import pytest

from gpuaudit.inventory import (
    Cluster,
    ConfigIssue,
    Gap,
    GpuTelemetry,
    Inventory,
    ProfileCapacity,
    VgpuProfile,
    VmHostRule,
)
from gpuaudit.model.facts import Facts
from gpuaudit.plan import whatif
from gpuaudit.plan.headroom import headroom_all
from gpuaudit.plan.whatif import (
    AddDrsRule,
    AddHosts,
    ChangeError,
    MoveVm,
    RetireHosts,
    SetDrs,
    SetHa,
    SetProfile,
    SetVgpuMode,
    apply,
)
from gpuaudit.report.plan import measures
from gpuaudit.results import (
    AuditResult,
    ClusterHeadroom,
    ClusterSimulation,
    Finding,
    Headroom,
)
from gpuaudit.simulation.failures import simulate_cluster
from gpuaudit.verdict.check import run_checks
from tests.support.builders import Estate, healthy, passthrough_estate

EIGHT = "grid_l4-8q"
EVACUATES = {"VgpuMMAutomationTimeoutSecs": "-1"}  # Broadcom KB 88271: DRS evacuates vGPU VMs


def k(inv: Inventory, cluster: str = "c1") -> int:
    return simulate_cluster(inv, cluster).tolerates


def full_pair() -> Inventory:
    """Two hosts, one L4 each, each running three L4-8Q VMs: the GPUs are full, so the
    loss of either host leaves its 3 VMs nowhere to go: N+0."""
    e = Estate()
    e.cluster("c1")
    hosts = [e.host(f"h{i}", "c1", profiles=(EIGHT,)) for i in (1, 2)]
    for h in hosts:
        e.gpu(h, vgpu_mode="sameSize")
    e.datastore("san", hosts)
    for i, h in enumerate(hosts):
        for j in range(3):
            e.vm(f"v{i}{j}", h, ["san"], vgpu=EIGHT)
    return e.inv


def test_one_more_host_of_the_same_kind_makes_a_full_pair_n_plus_1() -> None:
    inv = full_pair()
    assert k(inv) == 0
    # The new host's L4 takes 3 L4-8Q: the loss of either old host displaces 3, which it
    # takes. Losing two hosts displaces 3 or 6 VMs onto at most 3 free slots: N+1, not 2.
    after = apply(inv, [AddHosts("c1", like="h1")]).inventory
    assert k(after) == 1
    new = after.host("c1-new-1")
    assert new is not None and new.cluster == "c1"
    assert [g.vms for g in new.gpus] == [[]]
    assert [m.host for m in after.datastores[0].mounts] == ["h1", "h2", "c1-new-1"]


def test_the_original_inventory_is_left_as_it_was() -> None:
    inv = full_pair()
    apply(inv, [AddHosts("c1", like="h1"), RetireHosts(("h2",))])
    assert [h.name for h in inv.hosts] == ["h1", "h2"]


def test_added_hosts_take_the_gpu_count_memory_and_profiles_given() -> None:
    after = apply(
        full_pair(),
        [AddHosts("c1", count=2, gpus=3, memory_gb=768, profiles=("grid_l4-24q",))],
    ).inventory
    new = [h for h in after.hosts if h.name.startswith("c1-new-")]
    assert [h.name for h in new] == ["c1-new-1", "c1-new-2"]
    assert [len(h.gpus) for h in new] == [3, 3]
    assert len({g.pci_id for g in new[0].gpus}) == 3
    assert [h.memory_mb for h in new] == [768 * 1024] * 2
    assert [p.name for p in new[0].vgpu_profiles] == ["grid_l4-24q"]


def test_a_board_no_host_has_comes_from_the_gpu_catalogue() -> None:
    after = apply(
        full_pair(), [AddHosts("c1", gpu_model="NVIDIA L40S", gpus=2, vgpu_mode="sameSize")]
    ).inventory
    gpus = after.host("c1-new-1").gpus  # type: ignore[union-attr]
    # The L40S: PCI device 26b9, 48 GB of frame buffer (NVIDIA's L40S datasheet).
    assert [(g.device_id, g.memory_mb, g.known_model) for g in gpus] == [
        (0x26B9, 48 * 1024, True)
    ] * 2
    assert gpus[0].graphics_type == "sharedDirect"


def test_an_unknown_board_stays_unknown() -> None:
    after = apply(full_pair(), [AddHosts("c1", gpu_model="Acme Z9", gpus=1)]).inventory
    (gpu,) = after.host("c1-new-1").gpus  # type: ignore[union-attr]
    assert (gpu.model, gpu.known_model, gpu.memory_mb, gpu.device_id) == ("Acme Z9", False, 0, 0)


def test_a_name_in_use_is_refused() -> None:
    with pytest.raises(ChangeError) as err:
        apply(full_pair(), [AddHosts("c1", like="h1", name="h2")])
    assert (err.value.index, err.value.key) == (0, "name")


def test_retiring_an_idle_host_of_three_leaves_n_plus_1() -> None:
    # healthy(): three hosts, one L4-8Q VM each (3 slots per GPU). Retiring h3 moves v3
    # to a survivor (2 VMs there, 1 on the other). Losing a host of two then displaces 1
    # or 2 VMs onto the other's 2 or 1 free slots: N+1.
    e = healthy()
    e.inv.clusters[0].drs_options.update(EVACUATES)
    e.inv.clusters[0].drs_enabled, e.inv.clusters[0].drs_automation = True, "fullyAutomated"
    assert k(e.inv) == 2
    done = apply(e.inv, [RetireHosts(("h3",))])
    after = done.inventory
    assert after.host("h3") is None
    v3 = next(v for v in after.vms if v.name == "v3")
    assert v3.powered_on and v3.host in ("h1", "h2")
    assert k(after) == 1
    assert any(n.startswith("change 1: v3 moves from h3 to") for n in done.notes)


def test_a_vm_nothing_moves_is_powered_off_with_its_host_retired() -> None:
    # Without VgpuMMAutomationTimeoutSecs = -1 DRS moves no vGPU VM (KB 88271).
    done = apply(healthy().inv, [RetireHosts(("h*3",))])
    v3 = next(v for v in done.inventory.vms if v.name == "v3")
    assert (v3.power_state, v3.host) == ("poweredOff", None)
    assert any("v3 is powered off" in n for n in done.notes)


def test_a_pattern_matching_no_host_is_an_error() -> None:
    with pytest.raises(ChangeError, match="no host matches 'x\\*'"):
        apply(healthy().inv, [RetireHosts(("x*",))])


def test_moving_a_vm_seats_it_on_the_target_gpu() -> None:
    after = apply(healthy().inv, [MoveVm("v1", "h2")]).inventory
    assert [g.vms for h in after.hosts for g in h.gpus] == [[], ["v2", "v1"], ["v3"]]
    assert next(v.host for v in after.vms if v.name == "v1") == "h2"


@pytest.mark.parametrize(
    ("change", "key"),
    [(MoveVm("nope", "h2"), "vm"), (MoveVm("v1", "nope"), "host")],
)
def test_moving_names_a_known_vm_and_host(change: MoveVm, key: str) -> None:
    with pytest.raises(ChangeError) as err:
        apply(healthy().inv, [change])
    assert err.value.key == key


def test_a_whole_gpu_profile_leaves_no_gpu_for_its_restart() -> None:
    # healthy(): one L4-8Q VM per host, 3 per GPU: two hosts lost put 2 on the third
    # (3 in all): N+2. With v1 on L4-24Q (a whole L4), the loss of h1 needs an empty L4,
    # and h2's and h3's each run an L4-8Q VM: N+0.
    inv = healthy().inv
    assert k(inv) == 2
    after = apply(inv, [SetProfile("v1", "grid_l4-24q")]).inventory
    (att,) = next(v for v in after.vms if v.name == "v1").gpus
    assert (att.profile, att.migrate_supported) == ("grid_l4-24q", True)
    assert k(after) == 0


def test_a_vm_without_a_vgpu_has_no_profile_to_change() -> None:
    e = Estate()
    e.cluster("c1")
    h = e.host("h1", "c1", profiles=())
    g = e.gpu(h, mode="passthrough")
    e.vm("p1", h, [], passthrough=g)
    with pytest.raises(ChangeError, match="p1 has no vGPU"):
        apply(e.inv, [SetProfile("p1", EIGHT)])


def test_a_clusters_vgpu_gpus_switch_mode() -> None:
    after = apply(healthy().inv, [SetVgpuMode("mixedSize", cluster="c1")]).inventory
    assert [g.vgpu_mode for h in after.hosts for g in h.gpus] == ["mixedSize"] * 3
    one = apply(healthy().inv, [SetVgpuMode("mixedSize", hosts=("h2",))]).inventory
    assert [g.vgpu_mode for h in one.hosts for g in h.gpus] == [None, "mixedSize", None]


def test_an_unknown_cluster_is_an_error() -> None:
    with pytest.raises(ChangeError) as err:
        apply(healthy().inv, [SetVgpuMode("mixedSize", cluster="c9")])
    assert (err.value.key, err.value.message) == ("cluster", "no cluster 'c9'")


def test_a_mandatory_anti_affinity_rule_is_added() -> None:
    rule = AddDrsRule("c1", "apart", "anti-affinity", ("v1", "v2"), mandatory=True)
    (added,) = apply(healthy().inv, [rule]).inventory.clusters[0].vm_vm_rules
    assert (added.name, added.affinity, added.mandatory, added.vms) == (
        "apart",
        False,
        True,
        ["v1", "v2"],
    )


def test_a_vm_host_rule_binds_its_vms_to_its_hosts() -> None:
    # v1 must run on h1 alone: the loss of h1 leaves it nowhere to restart: N+0.
    rule = AddDrsRule("c1", "pin", "vm-host", ("v1",), hosts=("h1",), mandatory=True)
    after = apply(healthy().inv, [rule]).inventory
    (added,) = after.clusters[0].vm_host_rules
    assert (added.vms, added.hosts, added.affine) == (["v1"], ["h1"], True)
    assert k(after) == 0


def test_a_rule_names_vms_of_its_cluster() -> None:
    with pytest.raises(ChangeError) as err:
        apply(healthy().inv, [AddDrsRule("c1", "x", "affinity", ("v1", "ghost"))])
    assert (err.value.key, err.value.message) == ("vms", "no VM 'ghost'")


def test_turning_ha_off_leaves_no_restart() -> None:
    assert k(apply(healthy().inv, [SetHa("c1", enabled=False)]).inventory) == 0


def test_ha_and_drs_options_are_set() -> None:
    changes = [
        SetHa("c1", failover_level=1, options=(("das.heartbeatDsPerHost", "4"),)),
        SetDrs("c1", enabled=True, automation="fullyAutomated", options=tuple(EVACUATES.items())),
    ]
    c = apply(healthy().inv, changes).inventory.clusters[0]
    assert (c.admission_control.policy, c.admission_control.failover_level) == ("slots", 1)
    assert c.ha_options == {"das.heartbeatDsPerHost": "4"}
    assert (c.drs_enabled, c.drs_automation, c.drs_options) == (True, "fullyAutomated", EVACUATES)


def test_the_comparison_shows_n_plus_k_and_the_findings_that_go() -> None:
    inv = full_pair()
    before = run_checks(inv, plans=True)
    after = run_checks(apply(inv, [AddHosts("c1", like="h1")]).inventory, plans=True)
    plan = whatif.compare(before, after, ["add one"])
    (c,) = plan.clusters
    assert (c.hosts_before, c.hosts_after) == (2, 3)
    assert (c.tolerates_before, c.tolerates_after) == (0, 1)
    (row,) = c.headroom
    # Before: both GPUs full, nothing fits. After: the new L4 takes 3; under N+1 none,
    # since each old host's loss needs all 3 of its slots.
    assert (row.fits_now_before, row.fits_now_after) == (0, 3)
    assert (row.fits_nk_before, row.fits_nk_after) == (0, 0)
    gone = {(f.rule, f.object) for f in plan.gone}
    # HA-05 failed for each of the 6 VMs, which a host's loss left nowhere to restart.
    assert {("HA-05", f"v{i}{j}") for i in (0, 1) for j in range(3)} <= gone
    assert not any(f.rule == "HA-05" for f in plan.appeared)


def test_a_copied_host_is_connected_out_of_maintenance_and_runs_nothing() -> None:
    inv = full_pair()
    h1 = inv.hosts[0]
    h1.in_maintenance, h1.connection_state, h1.ha_state = True, "disconnected", "master"
    h1.config_issues = [ConfigIssue("HostNoRedundantManagementNetworkEvent")]
    h1.vgpu_profiles[0].capacity = ProfileCapacity(3, 3, 0, 0)
    h1.gpus[0].telemetry = GpuTelemetry(instance="gpu0")
    h1.gpus[0].virtual_functions = ["0000:3b:00.4"]
    new = apply(inv, [AddHosts("c1", like="h1")]).inventory.host("c1-new-1")
    assert new is not None
    assert (new.in_maintenance, new.connection_state, new.ha_state) == (False, "connected", None)
    assert (new.config_issues, new.telemetry) == ([], None)
    assert [n.ip for n in new.vmotion_nics] == [""]
    # A new host runs nothing: all of its capacity of 3 remains.
    assert new.vgpu_profiles[0].capacity == ProfileCapacity(3, 0, 3, 0)
    (gpu,) = new.gpus
    assert (gpu.pci_id, gpu.vms, gpu.telemetry, gpu.virtual_functions) == (
        "0000:3b:00.0",
        [],
        None,
        [],
    )
    assert new.moref not in {h.moref for h in inv.hosts}


def test_a_copy_mounts_shared_datastores_only_and_inherits_the_unread_facts() -> None:
    inv = full_pair()
    e = Estate()
    e.inv = inv
    e.datastore("local-h1", [inv.hosts[0]], transport="local")
    inv.gaps.append(Gap("h1", "HostSystem", "vGPU manager version", "NoPermission", "host-h1"))
    after = apply(inv, [AddHosts("c1", like="h1")]).inventory
    mounted = {d.name: [m.host for m in d.mounts] for d in after.datastores}
    assert mounted == {"san": ["h1", "h2", "c1-new-1"], "local-h1": ["h1"]}
    san = after.datastore("san")
    assert san is not None and san.mounts[2].paths == san.mounts[0].paths != []
    assert [(g.object, g.property) for g in after.gaps] == [
        ("h1", "vGPU manager version"),
        ("c1-new-1", "vGPU manager version"),
    ]


def test_the_template_is_a_host_with_the_model_in_the_cluster_first() -> None:
    # h9 of another cluster has an L4 too; c1's own h1 is taken, and c1's datastore with it.
    inv = full_pair()
    e = Estate()
    e.inv = inv
    e.cluster("c2")
    h9 = e.host("h9", "c2", profiles=("grid_l4-24q",))
    e.gpu(h9)
    after = apply(inv, [AddHosts("c1", gpu_model="nvidia l4")]).inventory
    new = after.host("c1-new-1")
    assert new is not None and [p.name for p in new.vgpu_profiles] == [EIGHT]


def test_a_catalogue_board_without_vgpu_is_a_passthrough_gpu() -> None:
    after = apply(full_pair(), [AddHosts("c1", gpu_model="NVIDIA L40S", gpus=1)]).inventory
    (gpu,) = after.host("c1-new-1").gpus  # type: ignore[union-attr]
    assert (gpu.graphics_type, gpu.passthrough_enabled, gpu.passthrough_active) == (
        "direct",
        True,
        True,
    )
    assert (gpu.vgpu_mode, gpu.sriov_enabled, gpu.vendor_id) == (None, None, 0x10DE)


def test_an_ada_board_in_vgpu_mode_runs_its_vgpus_on_virtual_functions() -> None:
    # The L40S is an Ada board: each vGPU on an SR-IOV virtual function.
    change = AddHosts("c1", gpu_model="NVIDIA L40S", gpus=1, profiles=("grid_l40s-8q",))
    (gpu,) = apply(full_pair(), [change]).inventory.host("c1-new-1").gpus  # type: ignore[union-attr]
    assert (gpu.sriov_capable, gpu.sriov_enabled, gpu.sriov_active) == (True, True, True)
    assert (gpu.graphics_type, gpu.passthrough_active) == ("sharedDirect", False)


def test_profiles_given_keep_the_inventorys_description_without_vcenters_counts() -> None:
    inv = full_pair()
    inv.hosts[0].vgpu_profiles[0].capacity = ProfileCapacity(3, 3, 0, 0)
    change = AddHosts("c1", like="h1", profiles=(EIGHT, "grid_l4-2q"))
    new = apply(inv, [change]).inventory.host("c1-new-1")
    assert new is not None
    assert [(p.name, p.migrate_supported, p.capacity) for p in new.vgpu_profiles] == [
        (EIGHT, True, None),
        ("grid_l4-2q", None, None),
    ]


def test_a_note_says_what_was_added() -> None:
    inv = full_pair()
    inv.hosts[0].memory_mb = 512 * 1024
    done = apply(inv, [AddHosts("c1", like="h1", gpus=2, name="esx-{n}")])
    assert done.notes == ["change 1: added esx-1 to c1, 2 x NVIDIA L4, 512 GB"]


def test_new_names_count_past_the_names_in_use() -> None:
    inv = full_pair()
    after = apply(inv, [AddHosts("c1", like="h1", count=2, name="h{n}")]).inventory
    assert [h.name for h in after.hosts] == ["h1", "h2", "h3", "h4"]


def test_a_retired_host_leaves_its_rules_mounts_and_failover_role() -> None:
    e = healthy()
    c = e.inv.clusters[0]
    c.admission_control.failover_hosts = ["h3", "h1"]
    c.vm_host_rules.append(VmHostRule("r", vms=["v1"], hosts=["h1", "h3"]))
    after = apply(e.inv, [RetireHosts(("h3",))]).inventory
    c = after.clusters[0]
    assert c.admission_control.failover_hosts == ["h1"]
    assert c.vm_host_rules[0].hosts == ["h1"]
    assert [m.host for m in after.datastores[0].mounts] == ["h1", "h2"]


def test_a_disconnected_host_is_retired_without_a_move() -> None:
    e = healthy()
    e.inv.clusters[0].drs_options.update(EVACUATES)
    e.inv.hosts[2].connection_state = "disconnected"
    done = apply(e.inv, [RetireHosts(("h3",))])
    v3 = next(v for v in done.inventory.vms if v.name == "v3")
    assert (v3.power_state, v3.host) == ("poweredOff", None)
    assert done.notes == ["change 1: retired h3"]


def test_a_passthrough_vm_moves_to_an_idle_gpu_of_its_model() -> None:
    e = Estate()
    e.cluster("pt")
    hosts = [e.host(f"p{i}", "pt", profiles=()) for i in (1, 2)]
    g1 = e.gpu(hosts[0], mode="passthrough")
    e.gpu(hosts[1], "0000:3b:00.0", model="t4", mode="passthrough")
    idle = e.gpu(hosts[1], "0000:5e:00.0", mode="passthrough")
    e.vm("pv", hosts[0], [], passthrough=g1)
    after = apply(e.inv, [MoveVm("pv", "p2")]).inventory
    vm = after.vms[0]
    assert (vm.host, vm.gpus[0].pci_id) == ("p2", idle.pci_id)
    assert [g.vms for g in after.hosts[1].gpus] == [[], ["pv"]]
    assert after.hosts[0].gpus[0].vms == []


def test_no_gpu_of_the_target_taking_it_is_an_error() -> None:
    e = Estate()
    e.cluster("pt")
    hosts = [e.host(f"p{i}", "pt", profiles=()) for i in (1, 2)]
    g1 = e.gpu(hosts[0], mode="passthrough")
    busy = e.gpu(hosts[1], mode="passthrough")
    e.vm("pv", hosts[0], [], passthrough=g1)
    e.vm("other", hosts[1], [], passthrough=busy)
    with pytest.raises(ChangeError, match="no GPU of p2 takes pv's passthrough device"):
        apply(e.inv, [MoveVm("pv", "p2")])


def test_a_vgpu_moves_to_the_least_used_gpu_of_its_model() -> None:
    e = healthy()
    h2 = e.inv.hosts[1]
    e.gpu(h2, "0000:5e:00.0", model="t4")  # another model, idle: not a seat for an L4 vGPU
    e.gpu(h2, "0000:86:00.0")  # h2: v2 on its first L4, nothing on this one
    after = apply(e.inv, [MoveVm("v1", "h2")]).inventory
    assert [g.vms for g in after.hosts[1].gpus] == [["v2"], [], ["v1"]]


def test_a_powered_off_vm_moves_without_a_seat() -> None:
    e = healthy()
    e.vm("off", e.inv.hosts[0], ["san1"], vgpu=EIGHT, power="poweredOff")
    after = apply(e.inv, [MoveVm("off", "h2")]).inventory
    assert next(v.host for v in after.vms if v.name == "off") == "h2"
    assert [g.vms for h in after.hosts for g in h.gpus] == [["v1"], ["v2"], ["v3"]]


def test_a_host_in_no_cluster_takes_no_move() -> None:
    e = healthy()
    e.host("solo", None)
    with pytest.raises(ChangeError, match="solo is in no cluster"):
        apply(e.inv, [MoveVm("v1", "solo")])


def test_a_profile_no_host_offers_has_no_migration_support_known() -> None:
    e = healthy()
    e.inv.vms[0].gpus[0].migrate_data_mb = 8192
    (att,) = apply(e.inv, [SetProfile("v1", "grid_l4-2q")]).inventory.vms[0].gpus
    assert (att.profile, att.migrate_supported, att.migrate_data_mb) == ("grid_l4-2q", None, None)


def test_one_gpu_of_a_host_switches_mode() -> None:
    e = healthy()
    e.gpu(e.inv.hosts[1], "0000:5e:00.0")
    change = SetVgpuMode("mixedSize", hosts=("h2",), gpu="0000:5e:00.0")
    after = apply(e.inv, [change]).inventory
    assert [g.vgpu_mode for g in after.hosts[1].gpus] == [None, "mixedSize"]
    with pytest.raises(ChangeError) as err:
        apply(e.inv, [SetVgpuMode("mixedSize", hosts=("h2",), gpu="0000:99:00.0")])
    assert (err.value.key, err.value.message) == (
        "gpu",
        "no GPU 0000:99:00.0 in vGPU mode on those hosts",
    )


def test_passthrough_gpus_have_no_vgpu_mode_to_switch() -> None:
    with pytest.raises(ChangeError) as err:
        apply(passthrough_estate().inv, [SetVgpuMode("mixedSize", cluster="pt")])
    assert (err.value.key, err.value.message) == ("cluster", "no GPU there is in vGPU mode")


def test_a_rule_name_is_the_clusters_once() -> None:
    e = healthy()
    e.inv.clusters[0].vm_host_rules.append(VmHostRule("taken"))
    with pytest.raises(ChangeError) as err:
        apply(e.inv, [AddDrsRule("c1", "taken", "affinity", ("v1", "v2"))])
    assert (err.value.key, err.value.message) == ("name", "c1 already has a rule 'taken'")


def test_a_rule_takes_only_the_clusters_vms_and_hosts() -> None:
    e = healthy()
    e.cluster("c2")
    other = e.host("x1", "c2")
    e.gpu(other)
    e.vm("vx", other, [], vgpu=EIGHT)
    with pytest.raises(ChangeError, match="vx is not in c1"):
        apply(e.inv, [AddDrsRule("c1", "r", "affinity", ("v1", "vx"))])
    with pytest.raises(ChangeError, match="x1 is not in c1"):
        apply(e.inv, [AddDrsRule("c1", "r", "vm-host", ("v1",), hosts=("x1",))])
    with pytest.raises(ChangeError, match="an affinity rule names two VMs or more"):
        apply(e.inv, [AddDrsRule("c1", "r", "affinity", ("v1",))])


def test_a_vm_host_rule_names_its_groups_after_itself() -> None:
    rule = AddDrsRule("c1", "keep", "vm-host", ("v1", "v2"), hosts=("h*",), affine=False)
    (added,) = apply(healthy().inv, [rule]).inventory.clusters[0].vm_host_rules
    assert (added.vm_group, added.host_group, added.hosts) == (
        "keep-vms",
        "keep-hosts",
        ["h1", "h2", "h3"],
    )
    assert (added.name, added.affine, added.mandatory, added.enabled) == (
        "keep",
        False,
        False,
        True,
    )


def test_ha_settings_each_apply_alone() -> None:
    changes = [SetHa("c1", host_monitoring=False, admission_control=False, restart_priority="high")]
    c = apply(healthy().inv, changes).inventory.clusters[0]
    assert (c.ha_enabled, c.ha_host_monitoring, c.admission_control.enabled) == (
        True,
        False,
        False,
    )
    assert (c.admission_control.policy, c.default_restart_priority) == ("percent", "high")


def test_unset_settings_stay_as_they_were() -> None:
    e = healthy()
    c0 = e.inv.clusters[0]
    c0.drs_enabled, c0.drs_automation = True, "manual"
    c = apply(e.inv, [SetHa("c1"), SetDrs("c1")]).inventory.clusters[0]
    assert (c.ha_enabled, c.ha_host_monitoring, c.admission_control.enabled) == (True, True, True)
    assert (c.drs_enabled, c.drs_automation, c.default_restart_priority) == (
        True,
        "manual",
        "medium",
    )


def test_a_change_error_names_its_place() -> None:
    err = ChangeError(2, "vm", "no VM 'x'")
    assert str(err) == "change 3: vm: no VM 'x'"


def test_a_finding_whose_status_changes_appears_and_goes() -> None:
    def result(status: str) -> AuditResult:
        f = Finding("HA-05", "v1", "VirtualMachine", status, "high", status)  # type: ignore[arg-type]
        return AuditResult(Inventory(), [], [f], [])

    plan = whatif.compare(result("unproven"), result("fail"))
    assert [(f.rule, f.status) for f in plan.appeared] == [("HA-05", "fail")]
    assert [(f.rule, f.status) for f in plan.gone] == [("HA-05", "unproven")]
    same = whatif.compare(result("fail"), result("fail"))
    assert (same.appeared, same.gone) == ([], [])
    passed = whatif.compare(result("pass"), result("waived"))
    assert (passed.appeared, passed.gone) == ([], [])


def test_a_finding_whose_severity_changes_appears_and_goes() -> None:
    def result(severity: str) -> AuditResult:
        f = Finding("HA-08", "c1", "cluster", "fail", severity, "N+0")  # type: ignore[arg-type]
        return AuditResult(Inventory(), [], [f], [])

    plan = whatif.compare(result("medium"), result("high"))
    assert [(f.rule, f.severity) for f in plan.appeared] == [("HA-08", "high")]
    assert [(f.rule, f.severity) for f in plan.gone] == [("HA-08", "medium")]


def _findings(*found: tuple[str, str, str]) -> AuditResult:
    """(object, status, severity) of HA-05 findings."""
    return AuditResult(
        Inventory(),
        [],
        [Finding("HA-05", o, "VirtualMachine", st, sev, "") for o, st, sev in found],  # type: ignore[arg-type]
        [],
    )


def test_what_the_changes_make_worse_is_not_known_before() -> None:
    before = _findings(
        ("same", "fail", "high"),  # as bad after: known
        ("milder", "fail", "high"),  # not proven after: better, known
        ("lower", "fail", "high"),  # medium after: better, known
        ("harder", "unproven", "high"),  # fails after: worse
        ("raised", "fail", "medium"),  # high after: worse
        ("fixed", "fail", "high"),  # passes after: known, and absent
        ("waived", "waived", "high"),  # not open before
        ("passed", "pass", "high"),  # not open before
    )
    after = _findings(
        ("same", "fail", "high"),
        ("milder", "unproven", "high"),
        ("lower", "fail", "medium"),
        ("harder", "fail", "high"),
        ("raised", "fail", "high"),
        ("fixed", "pass", "high"),
        ("waived", "fail", "high"),
        ("passed", "unproven", "high"),
        ("new", "fail", "low"),
    )
    known = whatif.known_before(before, after)
    assert known == {("HA-05", o) for o in ("same", "milder", "lower", "fixed")}


def test_a_cluster_on_one_side_only_has_none_on_the_other() -> None:
    before = AuditResult(Inventory(), [], [], [ClusterSimulation("a", hosts=2, tolerates=1)])
    after = AuditResult(Inventory(), [], [], [ClusterSimulation("b", hosts=3)])
    plan = whatif.compare(before, after, ["x"], ["y"])
    assert (plan.changes, plan.notes) == (["x"], ["y"])
    a, b = plan.clusters
    assert (a.cluster, a.hosts_before, a.hosts_after, a.tolerates_before) == ("a", 2, None, 1)
    assert (b.cluster, b.hosts_before, b.hosts_after, b.tolerates_after) == ("b", None, 3, 0)
    assert (a.downtime_hosts_before, a.rolling_downtime_before) == (None, None)


def test_each_error_names_the_key_it_is_about() -> None:
    e = healthy()
    e.cluster("c2")
    x = e.host("x1", "c2")
    e.gpu(x)
    e.vm("vx", x, [], vgpu=EIGHT)
    e.host("ghost", "nowhere")
    p = e.host("p1", "c1", profiles=())
    e.gpu(p, mode="passthrough")
    e.vm("off", p, [], power="poweredOff")
    cases = [
        (AddHosts("c1", like="nope"), "like", "no host 'nope'"),
        (MoveVm("v1", "ghost"), "host", "ghost is in no cluster"),
        (MoveVm("v1", "p1"), "host", "no GPU of p1 takes v1's vgpu device"),
        (SetProfile("off", EIGHT), "vm", "off has no vGPU"),
        (SetVgpuMode("mixedSize", hosts=("p1",)), "hosts", "no GPU there is in vGPU mode"),
        (AddDrsRule("c1", "r", "affinity", ("v1", "vx")), "vms", "vx is not in c1"),
        (AddDrsRule("c1", "r", "vm-host", ("v1",), hosts=("x1",)), "hosts", "x1 is not in c1"),
        (
            AddDrsRule("c1", "r", "anti-affinity", ("v1",)),
            "vms",
            "an anti-affinity rule names two VMs or more",
        ),
    ]
    for change, key, message in cases:
        with pytest.raises(ChangeError) as err:
            apply(e.inv, [change])
        assert (err.value.key, err.value.message) == (key, message), change


def test_a_name_taken_twice_in_one_change_is_refused() -> None:
    with pytest.raises(ChangeError) as err:
        apply(full_pair(), [AddHosts("c1", like="h1", count=2, name="esx")])
    assert (err.value.key, err.value.message) == (
        "name",
        "a host named 'esx' is already in the inventory",
    )


def test_a_taken_name_is_skipped_by_one() -> None:
    inv = full_pair()
    inv.hosts[1].name = "c1-1"  # taken: the next free number is 2
    after = apply(inv, [AddHosts("c1", like="h1", name="{cluster}-{n}")]).inventory
    assert [h.name for h in after.hosts] == ["h1", "c1-1", "c1-2"]
    assert after.hosts[2].moref == "host-whatif-3"


def test_the_copied_gaps_name_the_new_hosts_moref() -> None:
    inv = full_pair()
    inv.gaps.append(Gap("h1", "HostSystem", "vGPU manager version", "NoPermission", "host-h1"))
    after = apply(inv, [AddHosts("c1", like="h1")]).inventory
    assert [(g.object, g.moref) for g in after.gaps] == [
        ("h1", "host-h1"),
        ("c1-new-1", "host-whatif-3"),
    ]


def test_the_template_of_a_model_is_the_first_host_of_it_in_the_cluster() -> None:
    # c1's h1 and h2 both run an L4; h1 offers L4-8Q, h2 L4-4Q: h1 is the template.
    # Added to c2, whose own host runs a T4, the template is still c1's h1.
    inv = full_pair()
    inv.hosts[1].vgpu_profiles = [VgpuProfile("grid_l4-4q")]
    e = Estate()
    e.inv = inv
    e.cluster("c2")
    t = e.host("t1", "c2", profiles=("grid_t4-16q",))
    e.gpu(t, model="t4")
    for cluster in ("c1", "c2"):
        change = AddHosts(cluster, gpu_model="nvidia l4", name="{cluster}-x")
        new = apply(inv, [change]).inventory.host(f"{cluster}-x")
        assert new is not None
        assert [p.name for p in new.vgpu_profiles] == [EIGHT]
        assert [(g.model, g.vgpu_mode) for g in new.gpus] == [("NVIDIA L4", "sameSize")]


def test_a_host_added_to_an_empty_cluster_is_made_from_the_catalogue() -> None:
    inv = full_pair()
    inv.clusters.append(Cluster("empty", "domain-empty"))
    after = apply(inv, [AddHosts("empty", gpu_model="nvidia l40s", gpus=1, vgpu_mode="sameSize")])
    new = after.inventory.host("empty-new-1")
    assert new is not None and (new.moref, new.cluster, new.vgpu_profiles) == (
        "host-whatif-3",
        "empty",
        [],
    )
    (gpu,) = new.gpus
    assert (gpu.pci_id, gpu.model, gpu.device_name, gpu.vendor_name) == (
        "0000:3b:00.0",
        "NVIDIA L40S",
        "nvidia l40s",
        "NVIDIA",
    )
    assert (gpu.vgpu_mode, gpu.passthrough_capable) == ("sameSize", True)
    assert after.notes == ["change 1: added empty-new-1 to empty, 1 x NVIDIA L40S, 0 GB"]


def test_gpus_without_a_model_to_copy_are_refused() -> None:
    inv = full_pair()
    inv.clusters.append(Cluster("empty", "domain-empty"))
    with pytest.raises(ChangeError) as err:
        apply(inv, [AddHosts("empty", gpus=2)])
    assert (err.value.key, err.value.message) == (
        "gpu_model",
        "give the GPU model of the new hosts' GPUs",
    )


def test_an_unknown_board_has_no_vendor() -> None:
    after = apply(full_pair(), [AddHosts("c1", gpu_model="Acme Z9", gpus=1)]).inventory
    (gpu,) = after.host("c1-new-1").gpus  # type: ignore[union-attr]
    assert (gpu.vendor_id, gpu.vendor_name, gpu.device_name) == (0, "", "Acme Z9")


def test_more_gpus_than_the_template_fill_the_next_slots() -> None:
    change = AddHosts("c1", like="h1", gpus=3, vgpu_mode="mixedSize")
    new = apply(full_pair(), [change]).inventory.host("c1-new-1")
    assert new is not None
    # The template's own slot 3b, then 3b + 20 and 3b + 40 (hex).
    assert [g.pci_id for g in new.gpus] == ["0000:3b:00.0", "0000:5b:00.0", "0000:7b:00.0"]
    assert [g.vgpu_mode for g in new.gpus] == ["mixedSize"] * 3


def test_a_host_with_no_gpu_says_so() -> None:
    done = apply(full_pair(), [AddHosts("c1", like="h1", gpus=0, memory_gb=256)])
    assert done.notes == ["change 1: added c1-new-1 to c1, no GPU, 256 GB"]


def test_a_copy_mounts_as_the_template_does() -> None:
    inv = full_pair()
    inv.datastores[0].mounts[0].accessible = False
    after = apply(inv, [AddHosts("c1", like="h1")]).inventory
    mount = after.datastores[0].mounts[-1]
    assert (mount.host, mount.mounted, mount.accessible) == ("c1-new-1", True, False)


def test_a_host_in_maintenance_is_retired_without_a_move() -> None:
    e = healthy()
    e.inv.clusters[0].drs_options.update(EVACUATES)
    e.inv.hosts[2].in_maintenance = True
    done = apply(e.inv, [RetireHosts(("h3",))])
    assert done.notes == ["change 1: retired h3"]


def test_a_vm_moved_off_a_retired_host_runs_on_the_gpu_it_went_to() -> None:
    e = healthy()
    e.inv.clusters[0].drs_options.update(EVACUATES)
    done = apply(e.inv, [RetireHosts(("h3",))])
    v3 = next(v for v in done.inventory.vms if v.name == "v3")
    to = done.inventory.host(v3.host or "")
    assert to is not None and "v3" in to.gpus[0].vms
    assert done.notes[0] == f"change 1: v3 moves from h3 to {to.name}"


def test_a_dynamic_directpath_vm_moves_to_an_idle_gpu() -> None:
    e = Estate()
    e.cluster("pt")
    hosts = [e.host(f"p{i}", "pt", profiles=()) for i in (1, 2)]
    g1 = e.gpu(hosts[0], mode="passthrough")
    e.gpu(hosts[1], "0000:5e:00.0", mode="passthrough")
    e.vm("dv", hosts[0], [], dynamic=g1)
    after = apply(e.inv, [MoveVm("dv", "p2")]).inventory
    assert after.vms[0].gpus[0].pci_id == "0000:5e:00.0"


def test_a_vm_on_no_host_moves() -> None:
    e = healthy()
    vm = e.vm("loose", e.inv.hosts[0], ["san1"], vgpu=EIGHT, power="poweredOff")
    vm.host = None
    after = apply(e.inv, [MoveVm("loose", "h2")]).inventory
    assert next(v.host for v in after.vms if v.name == "loose") == "h2"


def test_a_new_profile_is_described_as_the_vms_own_host_offers_it() -> None:
    e = healthy()
    e.inv.hosts[0].vgpu_profiles.append(VgpuProfile("grid_l4-2q", migrate_supported=True))
    e.inv.hosts[1].vgpu_profiles.append(VgpuProfile("grid_l4-2q", migrate_supported=False))
    (att,) = apply(e.inv, [SetProfile("v1", "grid_l4-2q")]).inventory.vms[0].gpus
    assert att.migrate_supported is True


def test_an_affinity_rule_keeps_its_vms_together() -> None:
    rule = AddDrsRule("c1", "together", "affinity", ("v1", "v2"))
    (added,) = apply(healthy().inv, [rule]).inventory.clusters[0].vm_vm_rules
    assert (added.name, added.affinity, added.mandatory) == ("together", True, False)


def test_ha_turned_on_with_a_failover_level_admits_by_it() -> None:
    e = healthy()
    c0 = e.inv.clusters[0]
    c0.ha_enabled, c0.admission_control.enabled = False, False
    c = apply(e.inv, [SetHa("c1", enabled=True, failover_level=2)]).inventory.clusters[0]
    assert (c.ha_enabled, c.admission_control.enabled) == (True, True)
    assert (c.admission_control.policy, c.admission_control.failover_level) == ("slots", 2)


def test_headroom_rows_of_one_side_have_none_on_the_other() -> None:
    def result(profile: str, now: int, nk: int) -> AuditResult:
        out = AuditResult(Inventory(), [], [], [ClusterSimulation("c1")])
        row = Headroom("NVIDIA L4", profile, 16384, now, nk)
        out.headroom = [ClusterHeadroom("c1", 1, True, [row])]
        return out

    (c,) = whatif.compare(result(EIGHT, 3, 1), result("grid_l4-4q", 7, 2)).clusters
    assert [
        (h.profile, h.fits_now_before, h.fits_now_after, h.fits_nk_before, h.fits_nk_after)
        for h in c.headroom
    ] == [("grid_l4-4q", None, 7, None, 2), (EIGHT, 3, None, 1, None)]


def test_headroom_rows_carry_what_each_side_could_not_count_on() -> None:
    def result(not_proven: str) -> AuditResult:
        out = AuditResult(Inventory(), [], [], [ClusterSimulation("c1")])
        row = Headroom("NVIDIA L4", EIGHT, 16384, 3, 0, not_proven=not_proven)
        out.headroom = [ClusterHeadroom("c1", 1, True, [row])]
        return out

    (c,) = whatif.compare(result(""), result("no catalogue knows the board")).clusters
    (h,) = c.headroom
    assert (h.not_proven_before, h.not_proven_after) == ("", "no catalogue knows the board")
    (row,) = [r for r in measures(c) if r[0].startswith("headroom")]
    assert row[1:] == ("3 / 0", "3 / 0 (not proven)")


def test_a_new_board_no_catalogue_knows_has_headroom_not_proven() -> None:
    # full_pair (N+0, both L4s full) and a new host with one "Acme Z9" offering L4-8Q:
    # whether it takes an L4-8Q is not known, so none is proven to fit on it, and the
    # row says why rather than reading as a plain 0.
    change = AddHosts("c1", gpu_model="Acme Z9", gpus=1, profiles=(EIGHT,))
    after = apply(full_pair(), [change]).inventory
    (c,) = headroom_all(Facts(after))
    (acme,) = [r for r in c.rows if r.gpu_model == "Acme Z9"]
    assert (acme.fits_now, acme.fits_nk) == (0, 0)
    assert "Acme Z9" in acme.not_proven and "c1-new-1" in acme.not_proven


def test_a_note_names_each_model_of_the_new_host() -> None:
    inv = full_pair()
    e = Estate()
    e.inv = inv
    e.gpu(inv.hosts[0], "0000:5e:00.0", model="t4")
    done = apply(inv, [AddHosts("c1", like="h1")])
    assert done.notes == ["change 1: added c1-new-1 to c1, 2 x NVIDIA L4, NVIDIA T4, 0 GB"]


def test_a_host_of_a_board_no_catalogue_knows_leaves_the_restarts_not_proven() -> None:
    # full_pair: h1 and h2, one L4 each running three L4-8Q (3 per GPU, NVIDIA's figure):
    # N+0. The new host's one GPU is an "Acme Z9" in vGPU mode offering grid_l4-8q: no
    # catalogue tells its PCI ids, so whether it is an L4 that takes the three VMs of a
    # lost host is not known. Read as a no, the cluster stays N+0 (proven); read as a
    # yes, the loss of h1 or h2 restarts its 3 VMs there (N+1), while the loss of two
    # hosts leaves 3 VMs with only a full L4 (never N+2). So: N+0, up to N+1 not proven,
    # and each of the six HA-05 findings not proven, naming the board, never failed.
    change = AddHosts("c1", gpu_model="Acme Z9", gpus=1, profiles=(EIGHT,))
    after = apply(full_pair(), [change]).inventory
    sim = simulate_cluster(after, "c1")
    assert (sim.tolerates, sim.tolerates_unproven) == (0, 1)
    assert any("Acme Z9" in why and "c1-new-1" in why for why in sim.not_proven)
    ha05 = {f.object: f for f in run_checks(after, None).findings if f.rule == "HA-05"}
    lost = ["v00", "v01", "v02", "v10", "v11", "v12"]
    assert {vm: ha05[vm].status for vm in lost} == dict.fromkeys(lost, "unproven")
    assert all("Acme Z9" in ha05[vm].evidence["not_proven"] for vm in lost)


def test_a_passthrough_board_no_catalogue_knows_still_takes_no_vgpu() -> None:
    # The same "Acme Z9" in passthrough mode: a vGPU never runs on a passthrough GPU,
    # whatever the board, so the three VMs of a lost host still fail to restart.
    after = apply(full_pair(), [AddHosts("c1", gpu_model="Acme Z9", gpus=1)]).inventory
    sim = simulate_cluster(after, "c1")
    assert (sim.tolerates, sim.tolerates_unproven) == (0, None)
    ha05 = [f.status for f in run_checks(after, None).findings if f.rule == "HA-05"]
    assert ha05.count("fail") == 6


def test_a_dynamic_directpath_vm_may_restart_on_a_board_no_catalogue_knows() -> None:
    # One host, one passthrough L4 held by a Dynamic DirectPath VM allowing 10de:27b8 (the
    # L4): N+0, its one GPU is gone with it. A new host's idle "Acme Z9" in passthrough
    # has no PCI ids known: whether the VM's allowed ids match it is not known.
    e = Estate()
    e.cluster("c1")
    h = e.host("h1", "c1", profiles=())
    g = e.gpu(h, mode="passthrough")
    e.datastore("san", [h])
    e.vm("dv", h, ["san"], dynamic=g)
    assert k(e.inv) == 0
    after = apply(e.inv, [AddHosts("c1", gpu_model="Acme Z9", gpus=1)]).inventory
    sim = simulate_cluster(after, "c1")
    assert (sim.tolerates, sim.tolerates_unproven) == (0, 1)
    ha05 = {f.object: f for f in run_checks(after, None).findings if f.rule == "HA-05"}
    assert ha05["dv"].status == "unproven"
    assert "Acme Z9" in ha05["dv"].evidence["not_proven"]
