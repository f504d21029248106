"""Stranded capacity (gpuaudit.plan.stranded) on hand-built one-GPU clusters, and its JSON,
workbook and HTML forms.

Every expectation is worked out below from NVIDIA's published figures, not from the code:

- L40S (48 GB = 49,152 MB), NVIDIA vGPU user guide r17, "vGPU Placements for GPUs with
  48 GB frame buffer" (mixed-size mode, placement size and IDs in 1 GB slots):
  L40S-16Q size 16 at IDs 0 and 32 (so at most 2), L40S-8Q size 8 at IDs 0, 16, 24, 40.
  A 16Q sits on slots 0-15 or 32-47; two of them take 0-15 and 32-47 and leave 16-31 (16 GB)
  free, where no 16Q may start, but two 8Q may (IDs 16 and 24).
- L40S in equal-size mode, NVIDIA's "Virtual GPU Types for NVIDIA L40S": at most 32
  L40S-1Q per GPU, and one frame-buffer size per GPU: 32 x 1 GB used, 16 GB stranded.
- A100 PCIe 80 GB in MIG mode, NVIDIA's MIG user guide, "Supported MIG Profiles": 7 of
  1g.10gb (A100D-1-10C), each 1 of the 8 memory slices, at start slices 0-6 only (7 compute
  slices): 7 x 10 GB used, the eighth slice (10 GB) stranded.
"""

from __future__ import annotations

import json

import pytest

from gpuaudit.inventory import Inventory
from gpuaudit.model.facts import Facts
from gpuaudit.plan.stranded import gpu_stranded, stranded_all
from gpuaudit.report.json_report import from_json_data, render_json, report_schema
from gpuaudit.report.workbook import audit_tables
from gpuaudit.results import AuditResult, ClusterStranded
from gpuaudit.simulation.failures import ClusterModel
from gpuaudit.verdict.check import run_checks
from tests.plan.test_maintenance_scenario import checkout_section
from tests.support.builders import Estate

GB = 1024
L40S = 48 * GB
A100 = 80 * GB


def estate(
    model: str,
    mode: str,
    offers: tuple[str, ...],
    running: list[str],
    hosts: int = 1,
) -> Inventory:
    """``hosts`` hosts of one GPU each, all offering ``offers``; ``running`` on the first."""
    e = Estate()
    e.cluster("c")
    made = [e.host(f"esx{i + 1}", "c", profiles=offers) for i in range(hosts)]
    gpus = []
    for h in made:
        h.memory_mb = 1024 * 1024
        gpus.append(e.gpu(h, model=model, vgpu_mode=mode))
    e.datastore("san", made)
    for i, profile in enumerate(running):
        e.vm(f"v{i}", made[0], ["san"], vgpu=profile, gpu=gpus[0])
    return e.inv


def only(inv: Inventory) -> ClusterStranded:
    (cluster,) = stranded_all(Facts(inv))
    return cluster


def first_gpu(inv: Inventory) -> tuple[int | None, int | None, str]:
    g = only(inv).gpus[0]
    return g.free_mb, g.stranded_mb, g.reason


def test_two_16q_in_mixed_size_mode_strand_the_16_gb_between_them() -> None:
    free, left, reason = first_gpu(
        estate("l40s", "mixedSize", ("grid_l40s-16q",), ["grid_l40s-16q"] * 2)
    )
    assert (free, left) == (L40S - 2 * 16 * GB, 16 * GB)
    assert reason == (
        "16384 MB free that no profile offered in the cluster can use "
        "(grid_l40s-16q: NVIDIA allows 2 of L40S-16Q per GPU in mixed-size mode)"
    )


def test_one_16q_leaves_room_for_one_more_and_16_gb_no_16q_can_use() -> None:
    # Wherever the running 16Q sits (0 or 32), the next takes the other ID; slots 16-31
    # stay free and no L40S-16Q placement starts there.
    free, left, _ = first_gpu(estate("l40s", "mixedSize", ("grid_l40s-16q",), ["grid_l40s-16q"]))
    assert (free, left) == (L40S - 16 * GB, 16 * GB)


def test_a_smaller_offered_profile_uses_the_gap_between_two_16q() -> None:
    # Two L40S-8Q start at IDs 16 and 24: the 16 GB between the 16Q is used.
    offers = ("grid_l40s-16q", "grid_l40s-8q")
    free, left, reason = first_gpu(estate("l40s", "mixedSize", offers, ["grid_l40s-16q"] * 2))
    assert (free, left, reason) == (16 * GB, 0, "")


def test_equal_size_mode_keeps_other_sizes_off_and_the_maximum_strands_the_rest() -> None:
    offers = ("grid_l40s-1q", "grid_l40s-24q")
    free, left, reason = first_gpu(estate("l40s", "sameSize", offers, ["grid_l40s-1q"]))
    # 31 more 1Q (NVIDIA's 32 per GPU): 48 GB - 32 x 1 GB = 16 GB stranded.
    assert (free, left) == (L40S - GB, 16 * GB)
    assert reason == (
        "16384 MB free that no profile offered in the cluster can use "
        "(grid_l40s-1q: NVIDIA allows 32 of L40S-1Q per GPU; "
        "grid_l40s-24q: equal-size mode runs one frame-buffer size per GPU)"
    )


def test_an_empty_gpu_in_equal_size_mode_is_filled_by_its_largest_fitting_profile() -> None:
    offers = ("grid_l40s-1q", "grid_l40s-24q")
    assert first_gpu(estate("l40s", "sameSize", offers, [])) == (L40S, 0, "")


def test_mig_geometry_strands_the_eighth_memory_slice() -> None:
    inv = estate("a100", "multiInstanceGpu", ("grid_a100d-1-10c",), [])
    free, left, reason = first_gpu(inv)
    assert (free, left) == (A100, 10 * GB)
    assert reason == (
        "10240 MB free that no profile offered in the cluster can use (grid_a100d-1-10c: "
        "no MIG placement left next to grid_a100d-1-10c (NVIDIA's MIG geometry))"
    )


def test_a_gpu_in_mig_mode_takes_no_time_sliced_profile() -> None:
    # A100D-40C is time-sliced (NVIDIA's A100 80 GB time-sliced types): not on a MIG GPU.
    inv = estate("a100", "multiInstanceGpu", ("grid_a100d-40c",), [])
    assert first_gpu(inv) == (
        A100,
        A100,
        "81920 MB free that no profile offered in the cluster can use "
        "(grid_a100d-40c: a GPU runs either MIG-backed or time-sliced vGPUs, not both)",
    )


def test_an_overcommitted_gpu_has_nothing_free() -> None:
    # Three L40S-24Q (72 GB) on a 48 GB GPU, as the inventory says: nothing free, no less.
    inv = estate("l40s", "mixedSize", ("grid_l40s-24q",), ["grid_l40s-24q"] * 3)
    assert first_gpu(inv) == (0, 0, "")


def test_a_larger_mig_profile_fills_what_the_small_one_strands() -> None:
    # 3g.40gb at start slices 0 and 4 (4 slices each): two of them take all 8 slices.
    inv = estate("a100", "multiInstanceGpu", ("grid_a100d-1-10c", "grid_a100d-3-40c"), [])
    assert first_gpu(inv) == (A100, 0, "")


def test_an_undecided_layout_is_not_known_never_zero() -> None:
    # A running 8Q sits at 0, 16, 24 or 40 (no API says which). One 16Q always fits (at
    # 32, or at 0 when the 8Q is at 16, 24 or 40); a second fits only when the 8Q is at
    # 16 or 24. So 16 GB is proven usable and 16 more may be: the figure is not known.
    inv = estate("l40s", "mixedSize", ("grid_l40s-16q",), ["grid_l40s-8q"])
    cluster = only(inv)
    (gpu,) = cluster.gpus
    assert (gpu.free_mb, gpu.stranded_mb) == (L40S - 8 * GB, None)
    assert "depends on where ESXi placed each of them" in gpu.reason
    assert (cluster.stranded_mb, cluster.not_known) == (0, 1)
    assert "the sum is at least 0 MB" in cluster.notes[-1]


def test_a_running_vgpu_of_unknown_frame_buffer_leaves_free_and_stranded_not_known() -> None:
    # NVIDIA publishes no L40S-5Q nor L40S-7Q: what they take, and so what is free, is
    # unknown.
    running = ["grid_l40s-7q", "grid_l40s-16q", "grid_l40s-5q", "grid_l40s-5q"]
    inv = estate("l40s", "mixedSize", ("grid_l40s-16q",), running)
    assert first_gpu(inv) == (
        None,
        None,
        "no frame buffer is known for grid_l40s-5q, grid_l40s-7q on NVIDIA L40S",
    )


def test_an_offered_profile_of_unknown_frame_buffer_makes_a_partial_fill_not_known() -> None:
    # Beside two 16Q no 16Q fits (16 GB free); whether an L40S-5Q (no NVIDIA figure) does,
    # and how much it would use, is unknown: the 16 GB may be usable.
    inv = estate("l40s", "mixedSize", ("grid_l40s-16q", "grid_l40s-5q"), ["grid_l40s-16q"] * 2)
    free, left, reason = first_gpu(inv)
    assert (free, left) == (16 * GB, None)
    assert "grid_l40s-5q" in reason


def test_a_full_gpu_strands_nothing() -> None:
    inv = estate("l40s", "mixedSize", ("grid_l40s-24q",), ["grid_l40s-24q"] * 2)
    assert first_gpu(inv) == (0, 0, "")


def test_no_offered_profile_for_the_model_strands_all_that_is_free() -> None:
    inv = estate("l40s", "mixedSize", ("grid_l4-8q",), [])
    free, left, reason = first_gpu(inv)
    assert (free, left) == (L40S, L40S)
    assert reason == "no vGPU profile offered in the cluster is for NVIDIA L40S"


def test_a_cluster_offering_no_profile_has_no_figure() -> None:
    cluster = only(estate("l40s", "mixedSize", (), []))
    (gpu,) = cluster.gpus
    assert (gpu.free_mb, gpu.stranded_mb, cluster.not_known) == (L40S, None, 1)
    assert gpu.reason == "the cluster's hosts report no vGPU profile they offer"
    assert cluster.notes[0] == "no active host of the cluster reports a vGPU profile it offers"


def test_the_cluster_sums_its_gpus() -> None:
    # Three hosts: esx1 runs two 16Q (16 GB stranded); esx2 and esx3 are empty, and an
    # empty L40S takes up to two 16Q (32 GB) and strands the 16 GB between them.
    cluster = only(estate("l40s", "mixedSize", ("grid_l40s-16q",), ["grid_l40s-16q"] * 2, 3))
    assert [g.host for g in cluster.gpus] == ["esx1", "esx2", "esx3"]
    assert [g.stranded_mb for g in cluster.gpus] == [16 * GB, 16 * GB, 16 * GB]
    assert (cluster.stranded_mb, cluster.not_known, cluster.notes) == (48 * GB, 0, [])
    assert cluster.profiles == ["grid_l40s-16q"]


def test_a_host_in_maintenance_mode_is_left_out() -> None:
    inv = estate("l40s", "mixedSize", ("grid_l40s-16q",), [], 2)
    inv.hosts[1].in_maintenance = True
    assert [g.host for g in only(inv).gpus] == ["esx1"]


def test_an_empty_gpu_of_a_board_without_a_known_frame_buffer_is_not_known_never_zero() -> None:
    # A board no catalogue knows (device 0x9999) and the inventory gives no frame buffer: its free
    # memory, and so what is stranded, is not known, not 0 of 0.
    inv = estate("l40s", "mixedSize", ("grid_l40s-16q",), [])
    (gpu,) = inv.hosts[0].gpus
    gpu.model = gpu.device_name = "NVIDIA Mystery X1"
    gpu.device_id, gpu.known_model, gpu.memory_mb = 0x9999, False, 0
    free, left, reason = first_gpu(inv)
    assert (free, left) == (None, None)
    assert reason == "the frame buffer of NVIDIA Mystery X1 is not known"
    assert (only(inv).stranded_mb, only(inv).not_known) == (0, 1)


def test_a_passthrough_gpu_is_left_out() -> None:
    e = Estate()
    e.cluster("c")
    h = e.host("esx1", "c", profiles=("grid_l40s-16q",))
    e.gpu(h, model="l40s", mode="passthrough")
    e.gpu(h, pci_id="0000:af:00.0", model="l40s", vgpu_mode="mixedSize")
    assert [g.gpu for g in only(e.inv).gpus] == ["0000:af:00.0"]


def one_1q(monkeypatch: pytest.MonkeyPatch, steps: int) -> tuple[int | None, int | None, str]:
    """An L40S in equal-size mode running one L40S-1Q, offered only L40S-1Q, weighed in
    at most ``steps`` steps. Its search takes 32 steps: 31 more 1Q admitted (NVIDIA's 32
    per GPU), the 32nd refused; the search that admits undecided answers takes as many."""
    monkeypatch.setattr("gpuaudit.plan.stranded.MAX_STEPS", steps)
    inv = estate("l40s", "sameSize", ("grid_l40s-1q",), ["grid_l40s-1q"])
    slot = ClusterModel(Facts(inv), "c").initial["esx1"][0]
    return gpu_stranded(slot, ["grid_l40s-1q"])


def test_an_empty_gpu_of_a_type_without_a_frame_buffer_figure_is_not_known() -> None:
    # The host offers grid_l40s-5q, which NVIDIA does not publish: one fits an empty GPU
    # (vCenter offers it there), but what it takes of the 48 GB is unknown.
    inv = estate("l40s", "mixedSize", ("grid_l40s-5q",), [])
    assert first_gpu(inv) == (L40S, None, "no frame buffer is known for grid_l40s-5q")


def test_vcenters_larger_frame_buffer_never_fills_past_the_free() -> None:
    # vCenter says grid_l40s-16q takes 30 GiB (fbSizeInGib), more than NVIDIA's 16 GB: the
    # larger counts. NVIDIA's placements take two, but 2 x 30 GB exceeds the 48 GB: one
    # fits, 48 - 30 = 18 GB is left.
    inv = estate("l40s", "mixedSize", ("grid_l40s-16q",), [])
    inv.hosts[0].vgpu_profiles[0].frame_buffer_gib = 30
    assert first_gpu(inv) == (
        L40S,
        18 * GB,
        "18432 MB free that no profile offered in the cluster can use "
        "(grid_l40s-16q: it takes 30720 MB)",
    )


def test_a_smaller_profile_still_fills_beside_one_that_no_longer_fits() -> None:
    # vCenter says grid_l40s-16q takes 34 GiB (34,816 MB). One 16Q, then a second would
    # pass NVIDIA's placements but not the 14,336 MB left; an 8Q (8,192 MB) beside it
    # still fits (8Q IDs 16 and 24 are free wherever the 16Q sits): 43,008 MB used, 6,144
    # left. Four 8Q alone (NVIDIA's mixed-size maximum) would use only 32 GB.
    inv = estate("l40s", "mixedSize", ("grid_l40s-16q", "grid_l40s-8q"), [])
    inv.hosts[0].vgpu_profiles[0].frame_buffer_gib = 34
    assert first_gpu(inv) == (
        L40S,
        6 * GB,
        "6144 MB free that no profile offered in the cluster can use "
        "(grid_l40s-16q: it takes 34816 MB; grid_l40s-8q: it takes 8192 MB)",
    )


def weighed(
    monkeypatch: pytest.MonkeyPatch, running: list[str], steps: int
) -> tuple[int | None, int | None]:
    """An L40S in equal-size mode offered L40S-1Q and L40S-24Q, weighed in at most
    ``steps`` steps (the search tries the larger first)."""
    monkeypatch.setattr("gpuaudit.plan.stranded.MAX_STEPS", steps)
    offers = ("grid_l40s-1q", "grid_l40s-24q")
    inv = estate("l40s", "sameSize", offers, running)
    slot = ClusterModel(Facts(inv), "c").initial["esx1"][0]
    free, left, _ = gpu_stranded(slot, list(offers))
    return free, left


def test_an_empty_gpu_is_filled_in_two_steps_by_the_largest_profile_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 24Q, then 24Q again: 48 GB used, the search stops there.
    assert weighed(monkeypatch, [], 2) == (L40S, 0)
    assert weighed(monkeypatch, [], 1) == (L40S, None)


def test_each_mix_is_weighed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # Next to a 1Q: 24Q refused (one size per GPU), 1Q admitted (2 steps); then only 1Q
    # is tried again, 30 more admitted and the 32nd refused (31 steps): 33. The search
    # that admits undecided answers takes as many.
    assert weighed(monkeypatch, ["grid_l40s-1q"], 33) == (L40S - GB, 16 * GB)
    assert weighed(monkeypatch, ["grid_l40s-1q"], 32) == (L40S - GB, None)


def test_too_many_combinations_to_weigh_is_not_known(monkeypatch: pytest.MonkeyPatch) -> None:
    assert one_1q(monkeypatch, 31) == (
        L40S - GB,
        None,
        "more than 31 combinations of the offered profiles to weigh",
    )


def test_a_search_within_its_steps_has_a_figure(monkeypatch: pytest.MonkeyPatch) -> None:
    assert one_1q(monkeypatch, 32)[:2] == (L40S - GB, 16 * GB)


@pytest.fixture
def result() -> AuditResult:
    inv = estate("l40s", "mixedSize", ("grid_l40s-16q",), ["grid_l40s-16q"] * 2, 2)
    inv.hosts[1].gpus[0].vgpu_mode = "mixedSize"
    checked = run_checks(inv)
    checked.stranded = stranded_all(Facts(inv))
    return checked


def test_the_json_report_carries_it_and_reads_it_back(result: AuditResult) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    doc = render_json(result)
    jsonschema.validate(doc, report_schema())
    (c,) = doc["stranded"]
    assert (c["cluster"], c["stranded_mb"], c["not_known"]) == ("c", 32 * GB, 0)
    assert c["gpus"][0]["mode"] == "mixed"
    assert from_json_data(json.loads(json.dumps(doc))).stranded == result.stranded


def test_the_json_report_holds_a_figure_not_known_as_null() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    inv = estate("l40s", "mixedSize", ("grid_l40s-16q",), ["grid_l40s-8q"])
    checked = run_checks(inv)
    checked.stranded = stranded_all(Facts(inv))
    doc = render_json(checked)
    jsonschema.validate(doc, report_schema())
    assert doc["stranded"][0]["gpus"][0]["stranded_mb"] is None


def test_the_workbook_has_a_stranded_sheet(result: AuditResult) -> None:
    sheet = next(t for t in audit_tables(result, 2) if t.title == "Stranded")
    rows = [tuple(r[:9]) for r in sheet.rows]
    assert rows == [
        (
            "c",
            "esx1",
            "0000:3b:00.0",
            "NVIDIA L40S",
            "mixed",
            L40S,
            "grid_l40s-16q, grid_l40s-16q",
            16 * GB,
            16 * GB,
        ),
        ("c", "esx2", "0000:3b:00.0", "NVIDIA L40S", "mixed", L40S, "", L40S, 16 * GB),
    ]


def test_the_html_report_has_a_stranded_section(
    result: AuditResult, monkeypatch: pytest.MonkeyPatch
) -> None:
    section = checkout_section(result, monkeypatch, "stranded")
    assert section.count('class="stranded-cluster"') == 1
    assert "32768 MB stranded on 2 GPU(s)" in section
    assert "at least" not in section


def test_the_html_report_says_not_known_and_at_least(monkeypatch: pytest.MonkeyPatch) -> None:
    inv = estate("l40s", "mixedSize", ("grid_l40s-16q",), ["grid_l40s-8q"])
    checked = run_checks(inv)
    checked.stranded = stranded_all(Facts(inv))
    section = checkout_section(checked, monkeypatch, "stranded")
    assert "at least 0 MB stranded" in section
    assert '<span class="stranded-unknown">not known</span>' in section
