"""Spare GPU capacity and N+k per GPU model and profile family; VM-03 only notes the mix.

The scenario expectations come from the "mixed" cluster of tests/scenarios/assignment.yaml,
worked out by hand: its GPUs per model, the VMs on each GPU, and equal-size vGPU
slots (floor(GPU frame buffer / profile frame buffer), NVIDIA's rule). The spare capacity
rows of small hand-built clusters are written out by hand too.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from gpuaudit.inventory import GpuAttachment, Inventory
from gpuaudit.report import render_html
from gpuaudit.report.summary import summarize
from gpuaudit.report.tables import clusters_table
from gpuaudit.results import SpareCapacity
from gpuaudit.rules import catalogue
from gpuaudit.simulation.failures import profile_family, simulate_cluster, simulate_cluster_notes
from gpuaudit.verdict.check import run_checks
from gpuaudit.vsphere import obtain as scan
from tests.conftest import CASSETTES
from tests.lab.scenario import load_scenario
from tests.support.builders import Estate, healthy

SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "assignment.yaml"


def replayed() -> Inventory:
    return scan.obtain_inventory(scan.Replay(CASSETTES / "assignment.yaml"))


def mixed_by_hand() -> dict[str, dict[str, Any]]:
    """Per GPU model of the mixed cluster: GPUs, idle GPUs, VMs, free slots, N+k."""
    dc = load_scenario(SCENARIO)["datacenters"][0]
    spec = next(c for c in dc["clusters"] if c["name"] == "mixed")
    vms = [v for v in dc["vms"] if any(v["host"] == h["name"] for h in spec["hosts"])]
    out: dict[str, dict[str, Any]] = {}
    for model in sorted({g["device_name"] for h in spec["hosts"] for g in h["gpus"]}):
        gpus = [
            (h["name"], g) for h in spec["hosts"] for g in h["gpus"] if g["device_name"] == model
        ]
        on = {
            (h, g["pci_id"]): [
                v for v in vms if v["host"] == h and v["gpus"][0]["on"] == g["pci_id"]
            ]
            for h, g in gpus
        }
        mine = [v for group in on.values() for v in group]
        profile = max(
            (v["gpus"][0]["vgpu"] for v in mine), key=lambda p: int(p.split("-")[-1][:-1])
        )
        profile_gb = int(profile.split("-")[-1][:-1])
        slots = {
            key: gpu["memory_mb"] // (profile_gb * 1024)
            for key, gpu in zip(on, (g for _, g in gpus), strict=True)
        }
        free = {key: slots[key] - len(on[key]) for key in on}
        hosts = [h["name"] for h in spec["hosts"]]
        k = 0
        for size in range(1, min(3, len(hosts)) + 1):
            ok = all(
                sum(1 for v in mine if v["host"] in combo)
                <= sum(n for (h, _), n in free.items() if h not in combo)
                for combo in itertools.combinations(hosts, size)
            )
            if not ok:
                break
            k = size
        out[model] = {
            "gpus": len(gpus),
            "idle": sum(1 for group in on.values() if not group),
            "vms": len(mine),
            "spare": sum(free.values()),
            "tolerates": k,
            "family": f"{profile.split('_')[1].split('-')[0]} {profile[-1]}",
        }
    return out


def test_spare_capacity_per_model_and_family_worked_out_by_hand() -> None:
    expected = mixed_by_hand()
    assert [e["tolerates"] for e in expected.values()] == [2, 0]  # the header's L4 N+2, T4 N+0
    sim = simulate_cluster(replayed(), "mixed")
    rows = {(r.model, r.family): r for r in sim.spare}
    assert len(rows) == 2 * len(expected)
    for model, e in expected.items():
        assert rows[(model, None)] == SpareCapacity(
            model, None, e["gpus"], e["idle"], e["vms"], e["idle"], e["tolerates"]
        )
        assert rows[(model, e["family"])] == SpareCapacity(
            model, e["family"], e["gpus"], e["idle"], e["vms"], e["spare"], e["tolerates"]
        )
    assert sim.tolerates == min(e["tolerates"] for e in expected.values())


def test_profile_family_is_the_gpu_and_series_or_mig() -> None:
    assert profile_family("grid_l4-4q") == "l4 q"
    assert profile_family("GRID_L40S-48C") == "l40s c"
    assert profile_family("nvidia_a16-2b") == "a16 b"
    assert profile_family("grid_a100-3-20c") == "a100 mig"
    assert profile_family("nvidia_h100-1-10c") == "h100 mig"
    assert profile_family("not-a-profile") is None


def test_vm_03_is_low_and_points_at_the_spare_capacity() -> None:
    rule = next(r for r in catalogue() if r.id == "VM-03")
    assert rule.severity == "low"
    assert "supported" in rule.rationale and "spare capacity per model" in rule.rationale
    assert any("assignable-hardware" in ref.url for ref in rule.references)
    result = run_checks(replayed())
    verdicts = {f.object: f for f in result.findings if f.rule == "VM-03"}
    assert verdicts["mixed"].status == "fail" and verdicts["mixed"].severity == "low"
    assert "supported" in verdicts["mixed"].message
    assert verdicts["spread"].status == "pass"


def test_cluster_card_and_clusters_sheet_show_the_spare_per_model() -> None:
    expected = mixed_by_hand()
    l4 = expected["NVIDIA L4"]
    line = (
        f"NVIDIA L4: {l4['idle']} of {l4['gpus']} GPUs idle, N+{l4['tolerates']} "
        f"({l4['family']}: room for {l4['spare']} more, N+{l4['tolerates']})"
    )
    result = run_checks(replayed())
    summary = summarize(result)
    table = clusters_table(result, summary)
    column = table.column_index("Spare per Model")
    row = next(r for r in table.rows if r[0] == "mixed")
    assert line in str(row[column])
    html = render_html(result)
    card = html[html.index('aria-label="Cluster mixed"') :]
    card = card[: card.index("</article>")]
    assert f"Spare per GPU model: {line}" in card


def test_spare_per_model_takes_the_lowest_family_n_plus_k() -> None:
    # h1's L4s run a (grid_l4-8q) and b (grid_l4-24c); h2 has an idle L4 and an idle T4.
    # Losing h1, a goes first (by name) to h2's L4, which then has no room for a 24 GB
    # vGPU: the c family is N+0. Losing both hosts leaves a out: the q family is N+1.
    e = Estate()
    e.cluster("c")
    profiles = ("grid_l4-8q", "grid_l4-24c")
    h1, h2 = e.host("h1", "c", profiles=profiles), e.host("h2", "c", profiles=profiles)
    first, second = e.gpu(h1), e.gpu(h1, "0000:af:00.0")
    e.gpu(h2)
    e.gpu(h2, "0000:af:00.0", model="t4")
    e.datastore("san", [h1, h2])
    e.vm("a", h1, ["san"], vgpu="grid_l4-8q", gpu=first)
    e.vm("b", h1, ["san"], vgpu="grid_l4-24c", gpu=second)
    sim = simulate_cluster(e.inv, "c")
    assert sim.tolerates == 0
    assert sim.spare == [
        SpareCapacity("NVIDIA L4", None, 3, 1, 2, 1, 0),
        # one more 24 GB vGPU fits: on h2's idle L4
        SpareCapacity("NVIDIA L4", "l4 c", 3, 1, 1, 1, 0),
        # 8 GB vGPUs: two more next to a, three on h2's L4
        SpareCapacity("NVIDIA L4", "l4 q", 3, 1, 1, 5, 1),
        # no VM: N+k is every combination a two-host cluster has
        SpareCapacity("NVIDIA T4", None, 1, 1, 0, 1, 2),
    ]


def test_a_family_no_failure_breaks_is_n_plus_the_failures_asked_for() -> None:
    # Three hosts, an 8q VM on each L4 (three fit): losing any two leaves one L4 for all
    # three. Searched up to two failures, the family and the model are N+2; each L4 takes
    # two more 8q VMs.
    out = simulate_cluster_notes(healthy().inv, "c1", max_failures=2)
    assert out.simulation.spare == [
        SpareCapacity("NVIDIA L4", None, 3, 0, 3, 0, 2),
        SpareCapacity("NVIDIA L4", "l4 q", 3, 0, 3, 6, 2),
    ]
    assert (out.simulation.tolerates, out.simulation.manual_tolerates) == (2, 2)


def test_spare_on_a_mixed_size_gpu_counts_only_room_its_placements_prove() -> None:
    # h1's mixed-size L4 runs two 2q and an 8q: 12 GB left, and NVIDIA allows two 8q. But
    # an 8q starts at slot 0 or 16 (8 slots), and a 2q may sit at 16, 18 or 22 (vGPU 17
    # user guide, A.3, 24 GB GPUs): wherever the running 8q is, a 2q may block the other
    # 8q start, and no API says where they sit. No room is proven there. h2's L4 (one size
    # per GPU) takes three: 3 in all.
    e = Estate()
    e.cluster("c")
    h1, h2 = e.host("h1", "c"), e.host("h2", "c")
    g = e.gpu(h1, vgpu_mode="mixedSize")
    e.gpu(h2)
    e.datastore("san", [h1, h2])
    for name, profile in (("a", "grid_l4-2q"), ("b", "grid_l4-2q"), ("c", "grid_l4-8q")):
        e.vm(name, h1, ["san"], vgpu=profile, gpu=g)
    sim = simulate_cluster(e.inv, "c")
    (family,) = [r for r in sim.spare if r.family == "l4 q"]
    assert family == SpareCapacity("NVIDIA L4", "l4 q", 2, 1, 3, 3, 0)


def test_family_spare_sizes_only_the_familys_own_vgpus() -> None:
    # m runs a grid_l4-8q on h1's L4 and a grid_t4-16q on h1's T4. The l4 q row asks for
    # 8 GB vGPUs only: two more next to m's and three on h2's idle L4. m's 16 GB T4 vGPU
    # is the t4 q row's: one more fits, on h2's idle T4. h2 offers no T4 profile: m never
    # restarts (N+0).
    e = Estate()
    e.cluster("c")
    h1, h2 = e.host("h1", "c"), e.host("h2", "c")
    l4 = e.gpu(h1)
    t4 = e.gpu(h1, "0000:af:00.0", model="t4")
    e.gpu(h2)
    e.gpu(h2, "0000:af:00.0", model="t4")
    e.datastore("san", [h1, h2])
    m = e.vm("m", h1, ["san"], vgpu="grid_l4-8q", gpu=l4)
    m.gpus.append(GpuAttachment("vgpu", profile="grid_t4-16q"))
    t4.vms.append("m")
    assert simulate_cluster(e.inv, "c").spare == [
        SpareCapacity("NVIDIA L4", None, 2, 1, 1, 1, 0),
        SpareCapacity("NVIDIA L4", "l4 q", 2, 1, 1, 5, 0),
        SpareCapacity("NVIDIA T4", None, 2, 1, 1, 1, 0),
        SpareCapacity("NVIDIA T4", "t4 q", 2, 1, 1, 1, 0),
    ]


def test_family_spare_sizes_only_devices_on_the_rows_gpu_model() -> None:
    # The data puts m's grid_l4-24q on h1's T4, its grid_l4-8q on h1's L4. The L4's l4 q
    # row asks for 8 GB vGPUs (two more next to m's, three on h2's idle L4), not 24 GB
    # ones (none next to m's, one on h2).
    e = Estate()
    e.cluster("c")
    h1, h2 = e.host("h1", "c"), e.host("h2", "c")
    l4 = e.gpu(h1)
    t4 = e.gpu(h1, "0000:af:00.0", model="t4")
    e.gpu(h2)
    e.datastore("san", [h1, h2])
    m = e.vm("m", h1, ["san"], vgpu="grid_l4-8q", gpu=l4)
    m.gpus.append(GpuAttachment("vgpu", profile="grid_l4-24q"))
    t4.vms.append("m")
    (row,) = [
        r for r in simulate_cluster(e.inv, "c").spare if r.family == "l4 q" and "L4" in r.model
    ]
    assert row == SpareCapacity("NVIDIA L4", "l4 q", 2, 1, 1, 5, 0)


def test_a_profile_of_no_known_family_is_its_own_row_of_whole_gpus() -> None:
    # "custom" is no NVIDIA profile name: its row is named by the profile, and with no
    # size known each vGPU takes a whole L4. h2's idle L4 is the one more that fits.
    e = Estate()
    e.cluster("c")
    h1, h2 = (e.host(n, "c", profiles=("custom",)) for n in ("h1", "h2"))
    e.gpu(h1)
    e.gpu(h2)
    e.datastore("san", [h1, h2])
    e.vm("u", h1, ["san"], vgpu="custom")
    sim = simulate_cluster(e.inv, "c")
    assert sim.spare == [
        SpareCapacity("NVIDIA L4", None, 2, 1, 1, 1, 1),
        SpareCapacity("NVIDIA L4", "custom", 2, 1, 1, 1, 1),
    ]
    assert [(p.vm, p.to_host, p.to_gpu) for p in sim.failures[0].placed] == [
        ("u", "h2", "0000:3b:00.0")
    ]
