"""Spare GPU capacity and N+k per GPU model and profile family; VM-03 only notes the mix.

The expectations come from the "mixed" cluster of tests/scenarios/assignment.yaml,
worked out by hand: its GPUs per model, the VMs on each GPU, and equal-size vGPU
slots (floor(GPU frame buffer / profile frame buffer), NVIDIA's rule).
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from gpuaudit.inventory import Inventory
from gpuaudit.report import render_html
from gpuaudit.report.summary import summarize
from gpuaudit.report.tables import clusters_table
from gpuaudit.results import SpareCapacity
from gpuaudit.rules import catalogue
from gpuaudit.simulation.failures import profile_family, simulate_cluster
from gpuaudit.verdict.check import run_checks
from gpuaudit.vsphere import obtain
from tests.conftest import CASSETTES
from tests.lab.scenario import load_scenario

SCENARIO = Path(__file__).resolve().parent / "scenarios" / "assignment.yaml"


def replayed() -> Inventory:
    return obtain.obtain_inventory(obtain.Replay(CASSETTES / "assignment.yaml"))


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
