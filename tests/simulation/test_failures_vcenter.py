"""The host-failure simulation takes vCenter's own count of a host's vGPU room.

vSphere 9.0's DirectPathProfileManager.QueryCapacity answers, per host and profile,
``max`` (no VM running), ``consumed``, ``remaining`` ("not yet assigned to any
powered-on VM") and ``unusedReservation`` (reserved for VMs, not yet assigned). A
restart never takes more of a profile on a host than ``remaining``; where NVIDIA's
published figures decide nothing (a type they do not list), vCenter's count decides,
as long as only that profile arrives on the host.

NVIDIA's figures used below: an L40S (48 GB) runs at most 2 L40S-24Q vGPUs, and an L4
(24 GB) at most 3 L4-8Q, in equal-size mode (NVIDIA Virtual GPU Software User Guide,
"Virtual GPU Types for Supported GPUs").
"""

from __future__ import annotations

from gpuaudit.inventory import Host, ProfileCapacity, VgpuProfile
from gpuaudit.results import HostFailure
from gpuaudit.simulation.failures import simulate_cluster, simulate_cluster_notes, vcenter_room
from tests.support.builders import Estate

L40S_24Q = "nvidia_l40s-24q"
UNLISTED = "nvidia_l40s-7q"  # a type NVIDIA's tables do not have


def count(host: Host, profile: str, remaining: int, maximum: int = 2) -> None:
    """vCenter's QueryCapacity answer for the profile on the host."""
    for p in host.vgpu_profiles:
        if p.name == profile:
            consumed = maximum - remaining
            p.capacity = ProfileCapacity(maximum, consumed, remaining, 0)


def l40s_pair(profile: str = L40S_24Q) -> tuple[Estate, Host, Host]:
    """Two L40S hosts in equal-size mode, each running one vGPU of ``profile``."""
    e = Estate()
    e.cluster("c1")
    hosts = [e.host(f"h{i}", "c1", profiles=(L40S_24Q, UNLISTED)) for i in (1, 2)]
    for h in hosts:
        e.gpu(h, model="l40s", vgpu_mode="sameSize")
    e.datastore("san1", hosts)
    for i, h in enumerate(hosts, 1):
        e.vm(f"v{i}", h, ["san1"], vgpu=profile)
    return e, hosts[0], hosts[1]


def failure(e: Estate, host: str) -> HostFailure:
    sim = simulate_cluster(e.inv, "c1")
    return next(f for f in sim.failures if f.host == host)


def test_vcenters_room_is_remaining_not_what_is_reserved() -> None:
    _, h1, _ = l40s_pair()
    h1.vgpu_profiles[0].capacity = ProfileCapacity(2, 1, 0, 1)
    assert vcenter_room(h1) == {L40S_24Q: 0}
    assert vcenter_room(Host(name="x", moref="x", vgpu_profiles=[VgpuProfile("a")])) == {}


def test_a_restart_takes_no_more_than_vcenter_counts() -> None:
    # NVIDIA: a second 24Q fits h2's L40S. vCenter: h2 has room for none (a reservation
    # holds it), so h1's VM does not restart there.
    e, _, h2 = l40s_pair()
    count(h2, L40S_24Q, remaining=0)
    lost = failure(e, "h1")
    assert [p.vm for p in lost.placed] == []
    assert [p.vm for p in lost.unplaced] == ["v1"]
    assert "h2: vCenter's QueryCapacity counts no room for nvidia_l40s-24q" in (
        lost.unplaced[0].reason
    )
    # The twin: vCenter counts room for one.
    e, _, h2 = l40s_pair()
    count(h2, L40S_24Q, remaining=1)
    assert [p.vm for p in failure(e, "h1").placed] == ["v1"]


def test_the_stricter_source_is_named() -> None:
    e, _, h2 = l40s_pair()
    count(h2, L40S_24Q, remaining=0)
    notes = simulate_cluster_notes(e.inv, "c1").notes
    assert (
        "h2: vCenter's QueryCapacity counts room for 0 more nvidia_l40s-24q, NVIDIA's "
        "figures for 1: the simulation takes vCenter's count"
    ) in notes
    # vCenter counting more than NVIDIA allows: NVIDIA's maximum of 2 holds.
    e, _, h2 = l40s_pair()
    count(h2, L40S_24Q, remaining=3, maximum=4)
    notes = simulate_cluster_notes(e.inv, "c1").notes
    assert (
        "h2: vCenter's QueryCapacity counts room for 3 more nvidia_l40s-24q, NVIDIA's "
        "figures for at most 1: the simulation takes NVIDIA's"
    ) in notes
    assert [p.vm for p in failure(e, "h1").placed] == ["v1"]


def test_vcenter_decides_a_type_nvidias_tables_do_not_list() -> None:
    # Without vCenter's count, the restart of a VM of an unlisted type is not proven.
    e, _, h2 = l40s_pair(UNLISTED)
    lost = failure(e, "h1")
    assert [p.vm for p in lost.placed] == [] and [p.vm for p in lost.unproven] == ["v1"]
    # With it, vCenter's count proves the room.
    e, _, h2 = l40s_pair(UNLISTED)
    count(h2, UNLISTED, remaining=1, maximum=6)
    lost = failure(e, "h1")
    assert [p.vm for p in lost.placed] == ["v1"] and lost.unproven == []
    # And refuses it where it counts none.
    e, _, h2 = l40s_pair(UNLISTED)
    count(h2, UNLISTED, remaining=0, maximum=6)
    lost = failure(e, "h1")
    assert [p.vm for p in lost.unplaced] == ["v1"] and lost.unproven == []


def test_vcenters_count_proves_nothing_once_another_profile_arrived() -> None:
    # h1 runs a 24Q and an unlisted vGPU; h2 has room for one of each by vCenter's
    # count, counted before either arrived. A 24Q arriving may take what vCenter
    # counted for the other, so the unlisted one's restart is not proven.
    e, h1, h2 = l40s_pair()
    e.vm("v9", h1, ["san1"], vgpu=UNLISTED)
    count(h2, L40S_24Q, remaining=1)
    count(h2, UNLISTED, remaining=1, maximum=6)
    lost = failure(e, "h1")
    restarted = {p.vm for p in lost.placed}
    assert "v9" not in restarted
    assert "v9" in {p.vm for p in (*lost.unproven, *lost.unplaced)}


def test_a_vm_with_two_vgpus_needs_room_for_both() -> None:
    e = Estate()
    e.cluster("c1")
    hosts = [e.host(f"h{i}", "c1") for i in (1, 2)]
    for h in hosts:
        e.gpu(h)
        e.gpu(h, pci_id="0000:5e:00.0")
    e.datastore("san1", hosts)
    vm = e.vm("v1", hosts[0], ["san1"], vgpu="grid_l4-8q")
    vm.gpus.append(vm.gpus[0].__class__("vgpu", profile="grid_l4-8q"))
    hosts[0].gpus[1].vms.append("v1")
    # NVIDIA: 3 L4-8Q per L4, so h2's two empty L4s hold six; vCenter counts one.
    count(hosts[1], "grid_l4-8q", remaining=1, maximum=6)
    assert [p.vm for p in failure(e, "h1").unplaced] == ["v1"]
    count(hosts[1], "grid_l4-8q", remaining=2, maximum=6)
    assert [p.vm for p in failure(e, "h1").placed] == ["v1"]


def test_spare_capacity_never_exceeds_vcenters_count() -> None:
    e, _, h2 = l40s_pair()
    count(h2, L40S_24Q, remaining=0)
    sim = simulate_cluster(e.inv, "c1")
    spare = {(s.model, s.family): s for s in sim.spare}
    # h1's L40S has room for one more 24Q by NVIDIA's figures and no vCenter count; h2's
    # has room for one by NVIDIA's and none by vCenter's.
    assert spare[("NVIDIA L40S", "l40s q")].spare == 1
    assert spare[("NVIDIA L40S", "l40s q")].tolerates == 0 and sim.tolerates == 0
    e, _, _ = l40s_pair()
    assert {(s.model, s.family): s.spare for s in simulate_cluster(e.inv, "c1").spare}[
        ("NVIDIA L40S", "l40s q")
    ] == 2


def tell(host: Host, profile: str, gib: int, sharing: str = "timeSliced") -> None:
    """What vCenter's QueryConfigTarget says of the profile (vgpuProfileInfo)."""
    for p in host.vgpu_profiles:
        if p.name == profile:
            p.frame_buffer_gib, p.sharing = gib, sharing


def test_vcenters_frame_buffer_decides_what_nvidias_tables_do_not() -> None:
    # h1's VM runs a type NVIDIA's tables do not list; h2's L40S, in equal-size mode,
    # runs a 24Q. Without a frame buffer its restart on h2 is not proven; vCenter says
    # 16 GiB, and equal-size mode runs one size per GPU: it is refused.
    e, h1, h2 = l40s_pair()
    e.inv.vms[0].gpus[0].profile = UNLISTED
    h1.gpus[0].vms = ["v1"]
    lost = failure(e, "h1")
    assert [p.vm for p in lost.unproven] == ["v1"]
    e, h1, h2 = l40s_pair()
    e.inv.vms[0].gpus[0].profile = UNLISTED
    for h in (h1, h2):
        tell(h, UNLISTED, 16)
    lost = failure(e, "h1")
    assert [p.vm for p in lost.unplaced] == ["v1"] and lost.unproven == []


def test_where_vcenter_gives_a_larger_frame_buffer_the_larger_holds() -> None:
    # NVIDIA: L40S-24Q has 24 GB, two per GPU. vCenter says 48 GiB: one per GPU.
    e, h1, h2 = l40s_pair()
    for h in (h1, h2):
        tell(h, L40S_24Q, 48)
    assert [p.vm for p in failure(e, "h1").unplaced] == ["v1"]
    notes = simulate_cluster_notes(e.inv, "c1").notes
    assert (
        "h2: vCenter gives nvidia_l40s-24q 49152 MB of frame buffer, NVIDIA's figures "
        "24576 MB: the simulation takes the larger"
    ) in notes
    # Agreeing figures change nothing.
    e, h1, h2 = l40s_pair()
    for h in (h1, h2):
        tell(h, L40S_24Q, 24)
    assert [p.vm for p in failure(e, "h1").placed] == ["v1"]
    assert not [n for n in simulate_cluster_notes(e.inv, "c1").notes if "vCenter" in n]


def test_vcenter_says_whether_a_profile_is_mig_backed() -> None:
    # An unlisted profile vCenter calls MIG-backed never joins a time-sliced GPU.
    e, h1, h2 = l40s_pair()
    e.inv.vms[0].gpus[0].profile = UNLISTED
    for h in (h1, h2):
        tell(h, UNLISTED, 8, sharing="mig")
    lost = failure(e, "h1")
    assert [p.vm for p in lost.unplaced] == ["v1"] and lost.unproven == []
