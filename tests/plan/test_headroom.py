"""Headroom under N+1 on a hand-built cluster, and its JSON, workbook and HTML forms.

Three hosts, one L4 each in equal-size mode, each offering grid_l4-8q: NVIDIA's vGPU user
guide (A.1, "Virtual GPU Types for NVIDIA L4") allows 3 L4-8Q per GPU, so the cluster
holds 9. Three run (two on esx1, one on esx2): 6 more fit now. A host failure displaces
at most 3 VMs onto the 6 slots of the two survivors, so with T VMs in all the loss of a
host holding m of them needs 6 - (T - m) >= m, that is T <= 6: 3 more VMs under N+1.
"""

from __future__ import annotations

import json

import pytest

from gpuaudit.inventory import Inventory, ProfileCapacity
from gpuaudit.knowledge import catalog
from gpuaudit.model.facts import Facts
from gpuaudit.plan import headroom as headroom_module
from gpuaudit.plan.headroom import headroom_all, placements, template_memory
from gpuaudit.plan.headroom import rows as hr_rows
from gpuaudit.report.json_report import from_json_data, render_json, report_schema
from gpuaudit.report.workbook import audit_tables
from gpuaudit.results import PASSTHROUGH, AuditResult
from gpuaudit.simulation.failures import ClusterModel
from gpuaudit.verdict.check import run_checks
from tests.plan.test_maintenance_scenario import checkout_section
from tests.support.builders import Estate

PROFILE = "grid_l4-8q"


def estate(remaining: tuple[int, ...] | None = None) -> Inventory:
    e = Estate()
    e.cluster("hr")
    hosts = [e.host(f"esx{i}", "hr", profiles=(PROFILE,)) for i in (1, 2, 3)]
    for h in hosts:
        h.memory_mb = 512 * 1024
    gpus = [e.gpu(h, vgpu_mode="sameSize") for h in hosts]
    e.datastore("san", hosts)
    for name, i in (("a", 0), ("b", 0), ("c", 1)):
        e.vm(name, hosts[i], ["san"], vgpu=PROFILE, gpu=gpus[i])
    if remaining is not None:
        for h, left in zip(hosts, remaining, strict=True):
            h.vgpu_profiles[0].capacity = ProfileCapacity(3, 3 - left, left, 0)
    return e.inv


def rows(inv: Inventory) -> list[tuple[str, str, int, int, int | None, bool]]:
    out = []
    for c in headroom_all(Facts(inv)):
        for r in c.rows:
            out.append(
                (
                    r.gpu_model,
                    r.profile,
                    r.fits_now,
                    r.fits_nk,
                    r.vcenter_remaining,
                    r.below_vcenter,
                )
            )
    return out


def test_three_more_fit_under_n_plus_1() -> None:
    assert rows(estate()) == [("NVIDIA L4", PROFILE, 6, 3, None, False)]


def test_vcenters_remaining_is_beside_it_and_the_reserve_is_flagged() -> None:
    # vCenter: 1, 2 and 3 more on esx1, esx2, esx3 (its own count of the free slots).
    assert rows(estate((1, 2, 3))) == [("NVIDIA L4", PROFILE, 6, 3, 6, True)]


def test_vcenters_remaining_bounds_what_fits_now_and_restarts() -> None:
    # vCenter says esx3 takes none: 3 fit now (1 on esx1, 2 on esx2). Now the loss of
    # esx1 (2 VMs) restarts on esx2 (2 more) and that of esx2 (1) on esx1 (1 more). The
    # first new VM goes to esx2, whose memory is freer than esx1's (esx3 takes none):
    # esx2 then takes 1 more, and the loss of esx1 leaves one of its 2 VMs unrestarted.
    assert rows(estate((1, 2, 0))) == [("NVIDIA L4", PROFILE, 3, 0, 3, True)]


def test_memory_bounds_it() -> None:
    inv = estate()
    # esx3: 52,657 MB less 2,048 MB and 1% (527) for ESXi leaves 50,082 MB for VMs; a
    # 16,384 MB GPU VM reserves it all plus 256 MB and 1% (164) of overhead, 16,804 MB:
    # 2 fit, not 3. esx1 and esx2 have no memory size (not checked): 1 and 2 by the GPUs.
    for h in inv.hosts:
        h.memory_mb = 0 if h.name != "esx3" else 52_657
    (row,) = headroom_all(Facts(inv))[0].rows
    assert row.fits_now == 5
    assert row.vm_memory_mb == 16384


def test_a_cluster_short_of_n_plus_1_has_no_headroom_under_it() -> None:
    inv = estate()
    inv.clusters[0].ha_enabled = False
    (c,) = headroom_all(Facts(inv))
    assert (c.rows[0].fits_now, c.rows[0].fits_nk, c.tolerates_now) == (6, 0, False)
    assert c.notes == ["vSphere HA restarts nothing here: no new VM fits under N+k"]


def unknown_board(inv: Inventory, host: str) -> None:
    """``host``'s GPU made a board nothing tells: no catalogue model and no PCI ids, as a
    what-if's host of a model no catalogue knows ("Acme Z9")."""
    (gpu,) = next(h for h in inv.hosts if h.name == host).gpus
    gpu.model = gpu.device_name = "Acme Z9"
    gpu.known_model, gpu.vendor_id, gpu.device_id = False, 0, 0


def test_a_board_no_catalogue_knows_is_not_counted_and_says_so() -> None:
    # esx3's GPU is an unknown board: whether it takes an L4-8Q is not known, so the proof
    # counts only esx1 (1 slot free) and esx2 (2 free): 3 fit now. N+1 holds now (the loss
    # of esx1's 2 VMs restarts them on esx2's 2 free slots, that of esx2's 1 on esx1's 1).
    # With n more on the 6 slots of esx1 and esx2 (3 + n VMs), the loss of the host holding
    # m of them needs 6 - (3 + n) >= m free: n = 0 is all that is proven. esx3 might take
    # the restarts, which is not known: both rows say so.
    inv = estate()
    unknown_board(inv, "esx3")
    (c,) = headroom_all(Facts(inv))
    (known,) = [r for r in c.rows if r.gpu_model == "NVIDIA L4"]
    (acme,) = [r for r in c.rows if r.gpu_model == "Acme Z9"]
    assert (acme.fits_now, acme.fits_nk) == (0, 0)
    assert "Acme Z9" in acme.not_proven and "esx3" in acme.not_proven
    assert (known.fits_now, known.fits_nk, c.tolerates_now) == (3, 0, True)
    assert "Acme Z9" in known.not_proven
    assert c.notes == []
    # In the JSON report, valid by its schema and read back the same.
    jsonschema = pytest.importorskip("jsonschema")
    checked = run_checks(inv)
    checked.headroom = [c]
    doc = render_json(checked)
    jsonschema.validate(doc, report_schema())
    assert from_json_data(json.loads(json.dumps(doc))).headroom == [c]


def test_n_plus_1_not_proven_now_is_said_in_the_note_and_in_every_row() -> None:
    # a and b on esx1, c on esx2; esx2's and esx3's GPUs unknown boards: the loss of esx1
    # could restart a and b only on unknown boards, so N+1 now is not proven.
    inv = estate()
    unknown_board(inv, "esx2")
    unknown_board(inv, "esx3")
    (c,) = headroom_all(Facts(inv))
    assert not c.tolerates_now
    why = "; ".join(
        f"no catalogue knows the board Acme Z9 of {h}: which GPU VMs it takes is not known"
        for h in ("esx2", "esx3")
    )
    assert c.notes == [
        f"the cluster is not proven to tolerate N+1 now ({why}): no new VM is proven to fit "
        "under it"
    ]
    assert [(r.gpu_model, r.fits_nk, r.not_proven) for r in c.rows] == [
        ("Acme Z9", 0, why),
        ("NVIDIA L4", 0, why),
    ]


def test_an_unknown_board_on_a_host_too_small_for_the_vms_is_still_named_for_its_model() -> None:
    # esx3's board is unknown and its memory (1 GB) takes no 16 GB VM: no placement asks
    # about its board, yet its model's row still names it, and the L4 row does not.
    inv = estate()
    unknown_board(inv, "esx3")
    inv.hosts[2].memory_mb = 1024
    (c,) = headroom_all(Facts(inv))
    by_model = {r.gpu_model: r for r in c.rows}
    assert "esx3" in by_model["Acme Z9"].not_proven
    assert by_model["NVIDIA L4"].not_proven == ""


def test_a_cluster_that_does_not_tolerate_n_plus_1_says_so_without_a_reason() -> None:
    # All three VMs on esx1, esx1 the only host offering the profile: nothing restarts.
    inv = estate()
    for h in inv.hosts[1:]:
        h.vgpu_profiles = []
    (c,) = headroom_all(Facts(inv))
    assert c.notes == ["the cluster does not tolerate N+1 now: no new VM fits under it"]
    assert [r.not_proven for r in c.rows] == [""]


def test_a_vgpu_type_without_nvidias_figures_is_counted_alone_on_a_gpu_and_says_so() -> None:
    # grid_l4-5q is no type NVIDIA publishes for the L4: for a proof it runs alone on a
    # GPU and takes all of it. Three L4s, one taken by a: 2 fit now. Under N+1, with T
    # such VMs one per GPU, the loss of a host needs a free GPU on another: T <= 2, so 1.
    e = Estate()
    e.cluster("hr")
    hosts = [e.host(f"esx{i}", "hr", profiles=("grid_l4-5q",)) for i in (1, 2, 3)]
    for h in hosts:
        h.memory_mb = 512 * 1024
    gpus = [e.gpu(h, vgpu_mode="sameSize") for h in hosts]
    e.datastore("san", hosts)
    e.vm("a", hosts[0], ["san"], vgpu="grid_l4-5q", gpu=gpus[0])
    (c,) = headroom_all(Facts(e.inv))
    (row,) = c.rows
    assert (row.fits_now, row.fits_nk) == (2, 1)
    assert "grid_l4-5q" in row.not_proven


def test_a_cluster_that_fails_n_plus_1_whatever_the_unknown_board_takes_says_it_fails() -> None:
    # A fixed passthrough VM on esx1's second GPU cannot restart anywhere (its device is
    # esx1's): N+1 fails however esx3's unknown board is read, so the note says it does
    # not tolerate N+1. The rows still say what they could not count on: how many more
    # L4-8Q fit now leaves out esx3, which might take some.
    inv = estate()
    unknown_board(inv, "esx3")
    e = Estate()
    e.inv = inv
    esx1 = inv.hosts[0]
    held = e.gpu(esx1, "0000:5e:00.0", mode="passthrough")
    e.vm("p", esx1, ["san"], passthrough=held)
    (c,) = headroom_all(Facts(inv))
    assert c.notes == ["the cluster does not tolerate N+1 now: no new VM fits under it"]
    by_model = {r.gpu_model: r for r in c.rows if r.profile == PROFILE}
    assert all("esx3" in r.not_proven and r.fits_nk == 0 for r in by_model.values())


def test_a_known_estate_has_no_reason() -> None:
    (c,) = headroom_all(Facts(estate()))
    assert [r.not_proven for r in c.rows] == [""]


@pytest.fixture
def result() -> AuditResult:
    inv = estate((1, 2, 3))
    checked = run_checks(inv)
    checked.headroom = headroom_all(Facts(inv))
    return checked


def test_the_json_report_carries_it_and_reads_it_back(result: AuditResult) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    doc = render_json(result)
    jsonschema.validate(doc, report_schema())
    (c,) = doc["headroom"]
    assert (c["cluster"], c["k"], c["rows"][0]["fits_nk"]) == ("hr", 1, 3)
    assert from_json_data(json.loads(json.dumps(doc))).headroom == result.headroom


def test_the_workbook_has_a_headroom_sheet(result: AuditResult) -> None:
    sheet = next(t for t in audit_tables(result, 2) if t.title == "Headroom")
    assert [tuple(r) for r in sheet.rows] == [
        ("hr", "NVIDIA L4", PROFILE, 16384, 6, 1, 3, 6, True, "")
    ]


def test_the_html_report_has_a_headroom_section(
    result: AuditResult, monkeypatch: pytest.MonkeyPatch
) -> None:
    section = checkout_section(result, monkeypatch, "headroom")
    assert section.count('class="headroom-cluster"') == 1
    assert "held for failures: 3" in section


def spread(hosts: int, running: tuple[int, ...], memory_mb: int = 512 * 1024) -> Inventory:
    """``hosts`` hosts with one L4 each offering grid_l4-8q (3 per GPU), a VM of it for
    each index in ``running`` on that host."""
    e = Estate()
    e.cluster("hr")
    hs = [e.host(f"esx{i + 1}", "hr", profiles=(PROFILE,)) for i in range(hosts)]
    for h in hs:
        h.memory_mb = memory_mb
    gpus = [e.gpu(h, vgpu_mode="sameSize") for h in hs]
    e.datastore("san", hs)
    for n, i in enumerate(running):
        e.vm(f"v{n}", hs[i], ["san"], vgpu=PROFILE, gpu=gpus[i])
    return e.inv


def test_a_policy_asking_n_plus_2_keeps_more_in_reserve_than_n_plus_1() -> None:
    # Four hosts of 3 slots (12), 3 VMs (2 on esx1, 1 on esx2): 9 more fit now. The loss
    # of any 2 hosts puts what ran there on the 6 slots of the other two, less what those
    # already run: with T VMs in all, T <= 6 under N+2 (3 more), T <= 9 under N+1 (6).
    inv = spread(4, (0, 0, 1))
    (c2,) = headroom_all(Facts(inv), 2)
    assert (c2.k, c2.tolerates_now, c2.notes) == (2, True, [])
    assert [(r.fits_now, r.fits_nk) for r in c2.rows] == [(9, 3)]
    (c1,) = headroom_all(Facts(inv))
    assert [(r.fits_now, r.fits_nk) for r in c1.rows] == [(9, 6)]


def test_n_plus_4_is_searched_past_the_default_three_failures() -> None:
    # Five hosts of 3 slots, 1 VM: the loss of 4 hosts leaves 3 slots for everything,
    # so T <= 3: 2 more under N+4, 14 now.
    (c,) = headroom_all(Facts(spread(5, (0,))), 4)
    assert (c.k, c.tolerates_now, c.notes) == (4, True, [])
    assert [(r.fits_now, r.fits_nk) for r in c.rows] == [(14, 2)]


def test_n_plus_k_beyond_the_hosts_is_not_tolerated() -> None:
    # Three hosts cannot lose four.
    (c,) = headroom_all(Facts(spread(3, (0,))), 4)
    assert (c.tolerates_now, c.rows[0].fits_nk) == (False, 0)
    assert c.notes == ["the cluster does not tolerate N+4 now: no new VM fits under it"]


def test_a_full_cluster_short_of_n_plus_1_says_so_and_is_not_below_vcenter() -> None:
    # 9 VMs fill the 9 slots: the loss of a host leaves 3 VMs with nowhere to go, and no
    # new VM fits. vCenter still counts 1 more per host (3): below it would mean the
    # reserve holds back VMs that fit, and none fits.
    inv = spread(3, (0, 0, 0, 1, 1, 1, 2, 2, 2))
    for h in inv.hosts:
        h.vgpu_profiles[0].capacity = ProfileCapacity(3, 2, 1, 0)
    (c,) = headroom_all(Facts(inv))
    assert c.tolerates_now is False
    assert c.notes == ["the cluster does not tolerate N+1 now: no new VM fits under it"]
    r = c.rows[0]
    assert (r.fits_now, r.fits_nk, r.vcenter_remaining, r.below_vcenter) == (0, 0, 3, False)


def test_a_reserve_equal_to_vcenters_remaining_is_not_below_it() -> None:
    # vCenter answers for esx1 (1 more) and esx2 (2 more), not esx3 (3 free slots): 3 in
    # all, while 6 fit now and 3 under N+1 (as in test_three_more_fit_under_n_plus_1).
    inv = estate()
    for h, left in zip(inv.hosts[:2], (1, 2), strict=True):
        h.vgpu_profiles[0].capacity = ProfileCapacity(3, 3 - left, left, 0)
    assert rows(inv) == [("NVIDIA L4", PROFILE, 6, 3, 3, False)]


def test_a_cluster_with_ha_off_and_no_gpu_vm_tolerates_n_plus_1_now() -> None:
    # Nothing runs, so nothing needs a restart; a new VM would, and HA restarts nothing.
    inv = spread(3, ())
    inv.clusters[0].ha_enabled = False
    (c,) = headroom_all(Facts(inv))
    assert (c.tolerates_now, c.rows[0].fits_now, c.rows[0].fits_nk) == (True, 9, 0)


def test_new_vms_go_to_the_freest_memory_first_the_cluster_order_on_a_tie() -> None:
    # Equal hosts; esx1 runs 2 VMs, esx2 1, esx3 none, each taking n MB of memory (F
    # free on an empty host). esx3 (F), then esx2 and esx3 tie at F-n: esx2; then esx3
    # (F-n); then all at F-2n: esx1 (its last slot), then esx2 and esx3 (theirs).
    inv = estate()
    model = ClusterModel(Facts(inv), "hr")
    ((gpu_model, profile, demand),) = hr_rows(model)
    new = placements(model, demand, 16384, gpu_model, profile)
    assert [vm.host for vm, _ in new] == ["esx3", "esx2", "esx3", "esx1", "esx2", "esx3"]
    assert [(vm.name, vm.moref) for vm, _ in new[:2]] == [
        (f"new-{PROFILE}-1", "new-1"),
        (f"new-{PROFILE}-2", "new-2"),
    ]
    assert [(a.kind, a.profile) for a in new[0][0].gpus] == [("vgpu", PROFILE)]


def test_hosts_of_unknown_memory_have_unbounded_room_and_keep_the_cluster_order() -> None:
    # No memory size: every host has room without end, so each new VM goes to the first
    # host (esx1, esx2, esx3) with a free slot: esx1's 1, esx2's 2, esx3's 3.
    inv = estate()
    for h in inv.hosts:
        h.memory_mb = 0
    model = ClusterModel(Facts(inv), "hr")
    ((gpu_model, profile, demand),) = hr_rows(model)
    new = placements(model, demand, 16384, gpu_model, profile)
    assert [vm.host for vm, _ in new] == ["esx1", "esx2", "esx2", "esx3", "esx3", "esx3"]


def test_a_host_whose_free_memory_equals_the_need_takes_one_more() -> None:
    # esx3: 52,990 MB less 2,048 and 530 (1%, rounded up) leaves 50,412 MB, three times
    # the 16,804 MB a 16,384 MB GPU VM takes (16,384 + 256 + 164): 3 fit there, and 1
    # and 2 on esx1 and esx2 (no memory size) by their free slots.
    inv = estate()
    for h in inv.hosts:
        h.memory_mb = 0 if h.name != "esx3" else 52_990
    (row,) = headroom_all(Facts(inv))[0].rows
    assert row.fits_now == 6


def test_new_vms_stop_at_the_bound_per_row(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(headroom_module, "MAX_NEW", 2)
    (row,) = headroom_all(Facts(estate()))[0].rows
    assert row.fits_now == 2


def two_boards() -> Inventory:
    """esx1 in maintenance, esx2 and esx3 each with an L4 and an A10 in Shared Direct mode,
    every host offering grid_l4-8q and grid_a10-4q."""
    e = Estate()
    e.cluster("hr")
    hs = [e.host(f"esx{i}", "hr", profiles=(PROFILE, "grid_a10-4q")) for i in (1, 2, 3)]
    hs[0].in_maintenance = True
    for h in hs:
        e.gpu(h, "0000:3b:00.0", "l4")
        e.gpu(h, "0000:5e:00.0", "a10")
    e.datastore("san", hs)
    return e.inv


def test_rows_pair_each_profile_with_its_own_board_past_a_host_in_maintenance() -> None:
    model = ClusterModel(Facts(two_boards()), "hr")
    assert [(m, p) for m, p, _ in hr_rows(model)] == [
        ("NVIDIA A10", "grid_a10-4q"),
        ("NVIDIA L4", PROFILE),
    ]


def whole_gpus() -> Inventory:
    """Three hosts with an L4 and an A10 in passthrough, one VM with a Dynamic DirectPath
    device allowing the L4 on esx1."""
    e = Estate()
    e.cluster("hr")
    hs = [e.host(f"esx{i}", "hr", profiles=()) for i in (1, 2, 3)]
    for h in hs:
        h.memory_mb = 512 * 1024
    l4s = [e.gpu(h, "0000:3b:00.0", "l4", mode="passthrough") for h in hs]
    for h in hs:
        e.gpu(h, "0000:5e:00.0", "a10", mode="passthrough")
    e.datastore("san", hs)
    e.vm("d", hs[0], ["san"], dynamic=l4s[0])
    return e.inv


def test_whole_gpus_by_dynamic_directpath_per_model() -> None:
    # L4: esx2's and esx3's are free (2 now); T L4 VMs survive a host's loss while T <= 2
    # (one L4 per survivor): 1 more. A10: 3 free; the loss of a host moves at most 1 A10
    # VM onto the other two: T <= 2, 2 more.
    assert [r[:4] for r in rows(whole_gpus())] == [
        ("NVIDIA A10", PASSTHROUGH, 3, 2),
        ("NVIDIA L4", PASSTHROUGH, 2, 1),
    ]


def test_a_new_whole_gpu_vm_allows_the_rows_model_on_the_gpu_it_was_given() -> None:
    model = ClusterModel(Facts(whole_gpus()), "hr")
    l4 = next(r for r in hr_rows(model) if r[0] == "NVIDIA L4")
    new = placements(model, l4[2], 16384, l4[0], l4[1])
    vm, seats = new[0]
    assert (vm.name, vm.moref, vm.host, seats) == (
        "new-passthrough-1",
        "new-1",
        "esx2",
        ("0000:3b:00.0",),
    )
    (att,) = vm.gpus
    assert (att.kind, att.pci_id, att.allowed) == (
        "dynamic",
        "0000:3b:00.0",
        [(catalog.NVIDIA, 0x27B8)],
    )


def memory_estate() -> Inventory:
    """Cluster "hr": an 8 GiB VM of GRID_L4-8Q (upper case as some hosts report it) and a
    32 GiB VM of grid_l4-4q; cluster "pt": a 24 GiB VM with a fixed passthrough L4 and a
    32 GiB vGPU VM; cluster "dy": a 20 GiB VM with a Dynamic DirectPath L4 and a 32 GiB
    vGPU VM; cluster "empty": GPUs and no VM."""
    e = Estate()
    for name, memories in (("hr", (8, 32)), ("pt", (24, 32)), ("dy", (20, 32))):
        e.cluster(name)
        h = e.host(f"{name}1", name)
        e.gpu(h, "0000:3b:00.0")
        g = e.gpu(h, "0000:5e:00.0", mode="passthrough")
        e.datastore(f"{name}-san", [h])
        if name == "hr":
            a = e.vm("a", h, ["hr-san"], vgpu="GRID_L4-8Q")
            b = e.vm("b", h, ["hr-san"], vgpu="grid_l4-4q")
        elif name == "pt":
            a = e.vm("a-pt", h, ["pt-san"], passthrough=g)
            b = e.vm("b-pt", h, ["pt-san"], vgpu="grid_l4-4q")
        else:
            a = e.vm("a-dy", h, ["dy-san"], dynamic=g)
            b = e.vm("b-dy", h, ["dy-san"], vgpu="grid_l4-4q")
        for vm, gib in zip((a, b), memories, strict=True):
            vm.memory_mb = vm.memory_reservation_mb = gib * 1024
    e.cluster("empty")
    e.gpu(e.host("empty1", "empty"), "0000:3b:00.0")
    return e.inv


def test_a_new_vm_reserves_what_the_largest_vm_of_its_profile_does() -> None:
    facts = Facts(memory_estate())
    assert template_memory(facts, "hr", PROFILE) == 8 * 1024
    assert template_memory(facts, "pt", PASSTHROUGH) == 24 * 1024
    assert template_memory(facts, "dy", PASSTHROUGH) == 20 * 1024
    assert template_memory(facts, "pt", "grid_l4-4q") == 32 * 1024


def test_a_new_vm_of_a_profile_nothing_runs_reserves_the_largest_gpu_vms_else_none() -> None:
    facts = Facts(memory_estate())
    assert template_memory(facts, "hr", "grid_l4-24q") == 32 * 1024
    assert template_memory(facts, "empty", PROFILE) == 0


def test_a_new_vm_takes_the_gpu_its_hosts_consolidation_policy_picks() -> None:
    # esx1 (one VM, on its second L4) has more free memory than esx2 (two VMs), so the
    # first new VM goes there; consolidation packs it next to that VM, on 0000:5e:00.0,
    # where the default (performance) would spread it onto the empty 0000:3b:00.0.
    e = Estate()
    e.cluster("hr")
    hs = [e.host(f"esx{i}", "hr", profiles=(PROFILE,)) for i in (1, 2)]
    for h in hs:
        h.memory_mb = 512 * 1024
        e.gpu(h, "0000:3b:00.0", vgpu_mode="sameSize")
        e.gpu(h, "0000:5e:00.0", vgpu_mode="sameSize")
    hs[0].assignment_policy = "consolidation"
    e.datastore("san", hs)
    e.vm("a", hs[0], ["san"], vgpu=PROFILE, gpu=hs[0].gpus[1])
    e.vm("b", hs[1], ["san"], vgpu=PROFILE, gpu=hs[1].gpus[0])
    e.vm("c", hs[1], ["san"], vgpu=PROFILE, gpu=hs[1].gpus[0])
    model = ClusterModel(Facts(e.inv), "hr")
    ((gpu_model, profile, demand),) = hr_rows(model)
    vm, seats = placements(model, demand, 16384, gpu_model, profile)[0]
    assert (vm.host, seats) == ("esx1", ("0000:5e:00.0",))


def test_n_plus_2_counts_the_gpus_the_hosts_own_policy_picks() -> None:
    # Three hosts with two L4s in equal-size mode (one vGPU size per GPU): esx1
    # (consolidation) runs an 8Q on its first L4, esx2 a 12Q, esx3 (performance) an 8Q
    # on its first L4; the 8Qs restart first (high priority). The loss of esx1 and esx2
    # sends an 8Q and then the 12Q to esx3: its policy spreads the 8Q onto the empty
    # L4, and the 12Q finds no L4 of its size, where the 8Q beside the other would
    # have left it one. So N+1 holds and N+2 does not.
    e = Estate()
    e.cluster("hr")
    hs = [e.host(f"esx{i}", "hr", profiles=(PROFILE, "grid_l4-12q")) for i in (1, 2, 3)]
    for h in hs:
        h.memory_mb = 512 * 1024
        e.gpu(h, "0000:3b:00.0", vgpu_mode="sameSize")
        e.gpu(h, "0000:5e:00.0", vgpu_mode="sameSize")
    hs[0].assignment_policy = "consolidation"
    e.datastore("san", hs)
    e.vm("a", hs[0], ["san"], vgpu=PROFILE, gpu=hs[0].gpus[0], priority="high")
    e.vm("b", hs[1], ["san"], vgpu="grid_l4-12q", gpu=hs[1].gpus[0])
    e.vm("c", hs[2], ["san"], vgpu=PROFILE, gpu=hs[2].gpus[0], priority="high")
    (c1,) = headroom_all(Facts(e.inv))
    (c2,) = headroom_all(Facts(e.inv), 2)
    assert (c1.tolerates_now, c2.tolerates_now) == (True, False)


def test_a_type_of_no_known_board_is_a_row_per_model_and_stays_on_it() -> None:
    # "nvidia_custom" names no board, so each model offering it has its row. NVIDIA's data
    # has no frame buffer for it, so a vGPU of it is counted as taking the whole GPU:
    # one per L4 and one per A10 of the two hosts.
    e = Estate()
    e.cluster("hr")
    hs = [e.host(f"esx{i}", "hr", profiles=("nvidia_custom",)) for i in (1, 2)]
    for h in hs:
        e.gpu(h, "0000:3b:00.0", "l4")
        e.gpu(h, "0000:5e:00.0", "a10")
    e.datastore("san", hs)
    assert [r[:3] for r in rows(e.inv)] == [
        ("NVIDIA A10", "nvidia_custom", 2),
        ("NVIDIA L4", "nvidia_custom", 2),
    ]
