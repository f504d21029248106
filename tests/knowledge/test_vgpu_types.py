"""NVIDIA's per-type vGPU facts as data: every figure has a source, every catalogue board
has its types, and the figures are NVIDIA's, some written out here from the documents.

The expectations quote NVIDIA's tables directly:

- NVIDIA Virtual GPU Software User Guide, release 17, A.1 "Virtual GPU Types for
  Supported GPUs" (L4, L40S, A40, T4) and A.3 "vGPU Placements for GPUs in Mixed-Size
  Mode" (24 GB and 48 GB boards);
- NVIDIA AI Enterprise 6, "Virtual GPU Types for Supported GPUs" (H100 SXM5 MIG-backed
  and time-sliced C-series types) and Table 18, "GPUs Requiring 64GB or More of MMIO
  Space";
- NVIDIA Multi-Instance GPU User Guide, "Supported MIG Profiles" and the
  ``nvidia-smi mig -lgipp`` listing for an A100 40GB;
- NVIDIA AI Enterprise 8.0, "NVIDIA NVSwitch": "a high-bandwidth, low-latency fabric that
  connects multiple GPUs in one system ... The switch behaves as a crossbar", supported on
  the "NVIDIA HGX B300, B200, H200, H100, H800, A100 8-GPU baseboard[s]".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuaudit.knowledge import catalog, vgpu_types
from gpuaudit.knowledge.vgpu_types import VgpuDataError, parse_board

DATA = Path(vgpu_types.__file__).parent / "vgpu-types"


def board(key: str) -> vgpu_types.BoardFacts:
    return next(b for b in vgpu_types.boards() if b.key == key)


def test_every_file_loads_and_every_figure_names_a_published_source() -> None:
    files = sorted(DATA.glob("*.yaml"))
    assert len(files) == len(vgpu_types.boards()) >= 40
    for b in vgpu_types.boards():
        for source in b.sources.values():
            assert source.title.strip() and source.url.startswith("https://"), (b.key, source)
        for t in b.types.values():
            assert t.source in b.sources.values(), (b.key, t.name)
        if b.mig is not None:
            for p in b.mig.profiles:
                assert p.source in b.sources.values(), (b.key, p.mig)


def test_every_board_of_the_catalogue_has_its_types() -> None:
    for model in catalog.all_models():
        facts = vgpu_types.board_of_model(model)
        assert facts is not None, model.name
        assert facts.types or (facts.mig and facts.mig.profiles), model.name


def test_a_row_without_a_source_is_refused() -> None:
    text = (DATA / "l4.yaml").read_text("utf-8")
    row = "  - {name: L4-24Q, series: Q, frame_buffer_mb: 24576, max_per_gpu: 1"
    assert row in text
    broken = text.replace(", source: ug17, placement_source: ug17-placements}", "}", 1)
    assert broken != text
    with pytest.raises(VgpuDataError, match="l4: L4-24Q: no source"):
        parse_board("l4", broken)
    with pytest.raises(VgpuDataError, match="is not a source"):
        parse_board(
            "l4", text.replace("placement_source: ug17-placements", "placement_source: x", 1)
        )
    with pytest.raises(VgpuDataError, match="no https URL"):
        parse_board("l4", text.replace("url: https://", "url: http://", 1))


@pytest.mark.parametrize(
    ("value", "message"),
    [("-1", "expected a whole number"), ("true", "expected a whole number"), ("3.5", "whole")],
)
def test_a_figure_that_is_no_count_is_refused(value: str, message: str) -> None:
    text = (DATA / "l4.yaml").read_text("utf-8")
    broken = text.replace(
        "name: L4-24Q, series: Q, frame_buffer_mb: 24576, max_per_gpu: 1,",
        f"name: L4-24Q, series: Q, frame_buffer_mb: 24576, max_per_gpu: {value},",
    )
    with pytest.raises(VgpuDataError, match=message):
        parse_board("l4", broken)


def test_unknown_is_kept_as_unknown() -> None:
    rtx = board("rtx-pro-6000-blackwell-se")
    assert rtx.type_for("nvidia_dc-8c") is not None
    assert rtx.type_for("nvidia_dc-8c").max_per_gpu is None  # type: ignore[union-attr]
    assert not rtx.mmio_c_series_gb.known


# NVIDIA's figures, written out from the documents named above


def test_equal_and_mixed_size_maximums_of_the_l4() -> None:
    # vGPU 17 user guide, A.1.8 NVIDIA L4: Maximum vGPUs per GPU, equal-size / mixed-size.
    published = {
        "L4-24Q": (1, 1),
        "L4-12Q": (2, 2),
        "L4-8Q": (3, 2),
        "L4-6Q": (4, 4),
        "L4-4Q": (6, 4),
        "L4-3Q": (8, 8),
        "L4-2Q": (12, 8),
        "L4-1Q": (24, 16),
    }
    l4 = board("l4")
    for name, (equal, mixed) in published.items():
        facts = l4.type_for(f"grid_{name.lower()}")
        assert facts is not None, name
        assert (facts.max_per_gpu, facts.max_per_gpu_mixed) == (equal, mixed), name


def test_one_gb_types_on_a_48_gb_board_are_capped_at_32() -> None:
    # vGPU 17 user guide, A.1 NVIDIA L40S: L40S-1Q 32 per GPU (not 48), 16 in mixed-size mode.
    facts = board("l40s").type_for("nvidia_l40s-1q")
    assert facts is not None
    assert (facts.frame_buffer_mb, facts.max_per_gpu, facts.max_per_gpu_mixed) == (1024, 32, 16)


def test_mixed_size_placements_of_a_24_gb_board() -> None:
    # vGPU 17 user guide, A.3, GPUs with 24 GB of frame buffer: placement size and IDs.
    published = {
        "L4-24Q": (24, (0,)),
        "L4-12Q": (12, (0, 12)),
        "L4-8Q": (8, (0, 16)),
        "L4-4Q": (4, (0, 8, 12, 20)),
    }
    l4 = board("l4")
    for name, placement in published.items():
        facts = l4.type_for(name)
        assert facts is not None
        assert (facts.placement_size, facts.placement_ids) == placement, name


def test_t4_has_no_mixed_size_mode_and_its_b4_types() -> None:
    # vGPU 17 user guide: the T4 does not support mixed-size mode; vGPU 8.0 user guide,
    # T4-2B4 and T4-1B4 (B-series types of 2 GB and 1 GB).
    t4 = board("t4")
    assert t4.mixed_size.value is False
    assert t4.type_for("grid_t4-2b4") is not None
    assert t4.type_for("grid_t4-2b4").frame_buffer_mb == 2048  # type: ignore[union-attr]


def test_the_h100_sxm5_mig_profiles_and_their_vgpu_types() -> None:
    # AI Enterprise 6, MIG-backed C-series for the H100 SXM5 80GB; MIG user guide, H100:
    # 1g.10gb x7, 1g.20gb x4, 2g.20gb x3, 3g.40gb x2, 4g.40gb x1, 7g.80gb x1, 1g.10gb+me x1.
    h100 = board("h100-sxm5-80gb")
    assert h100.mig is not None and (h100.mig.compute, h100.mig.slices) == (7, 8)
    published = {
        "H100XM-1-10C": 7,
        "H100XM-1-20C": 4,
        "H100XM-2-20C": 3,
        "H100XM-3-40C": 2,
        "H100XM-4-40C": 1,
        "H100XM-7-80C": 1,
        "H100XM-1-10CME": 1,
    }
    for name, maximum in published.items():
        mig = h100.mig_for(f"grid_{name.lower()}")
        assert mig is not None and mig.maximum == maximum, name
    assert h100.mig_for("grid_h100xm-1-10cme").media  # type: ignore[union-attr]


def test_the_a100_40gb_mig_placements() -> None:
    # MIG user guide, nvidia-smi mig -lgipp on an A100 40GB: start slices and span.
    published = {
        "A100-1-5C": ((0, 1, 2, 3, 4, 5, 6), 1),
        "A100-2-10C": ((0, 2, 4), 2),
        "A100-3-20C": ((0, 4), 4),
        "A100-4-20C": ((0,), 4),
        "A100-7-40C": ((0,), 8),
    }
    a100 = board("a100-pcie-40gb")
    for name, (starts, span) in published.items():
        mig = a100.mig_for(name)
        assert mig is not None and (mig.starts, mig.span) == (starts, span), name


def test_mmio_of_c_series_vgpus_per_nvidia_s_table() -> None:
    # AI Enterprise 6, Table 18: H100 (all variants) 256GB, A100 40GB 128GB, A40 128GB,
    # L4 64GB, A10 64GB, H200 (all variants) 512GB. The L40S is not in the table.
    published = {
        "h100-sxm5-80gb": 256,
        "a100-pcie-40gb": 128,
        "a40": 128,
        "l4": 64,
        "a10": 64,
        "h200-nvl-141gb": 512,
    }
    for key, gb in published.items():
        assert board(key).mmio_c_series_gb.value == gb, key
    assert board("l40s").mmio_c_series_gb.value is None


def test_the_hgx_boards_are_on_an_nvswitch_fabric_and_pcie_boards_are_not_said_to_be() -> None:
    # AI Enterprise 8.0, "Platform Support for NVIDIA NVSwitch": the HGX B300, B200, H200,
    # H100, H800 and A100 8-GPU baseboards. Their GPUs' boards in the data:
    hgx = (
        "b300-hgx",
        "b200-hgx",
        "h200-sxm-141gb",
        "h100-sxm5-80gb",
        "h800-sxm5-80gb",
        "a100-hgx-40gb",
        "a100-hgx-80gb",
    )
    for key in hgx:
        assert board(key).nvswitch, key
        assert board(key).nvlink_fabric.source.key == "aie8-nvswitch", key  # type: ignore[union-attr]
    # The page lists no PCIe board: which of their GPUs are linked is not said.
    pcie = ("h100-pcie-80gb", "h100-nvl-94gb", "h200-nvl-141gb", "l40s", "l4", "a100-pcie-80gb")
    for key in pcie:
        assert not board(key).nvswitch, key
        assert board(key).nvlink_fabric.value is None, key


def test_a_fabric_that_is_not_known_or_has_no_source_is_refused() -> None:
    text = (DATA / "h100-sxm5-80gb.yaml").read_text("utf-8")
    assert "fabric: nvswitch, fabric_source: aie8-nvswitch" in text
    with pytest.raises(VgpuDataError, match="fabric 'mesh' is not nvswitch"):
        parse_board("h100", text.replace("fabric: nvswitch,", "fabric: mesh,", 1))
    with pytest.raises(VgpuDataError, match="is not a source"):
        parse_board("h100", text.replace("fabric_source: aie8-nvswitch", "fabric_source: x", 1))
    with pytest.raises(VgpuDataError, match="a fabric without a source"):
        parse_board("h100", text.replace(" fabric_source: aie8-nvswitch,", "", 1))
    unknown = parse_board("h100", text.replace("fabric: nvswitch,", "fabric: unknown,", 1))
    assert not unknown.nvswitch and not unknown.nvlink_fabric.known


def test_a_board_is_found_by_its_pci_ids_and_the_a2_and_a16_by_subsystem() -> None:
    # pci.ids: 25b6 "GA107GL [A2 / A16]"; A16 - 25B6 10DE 14A9, A2 - 25B6 10DE 157E.
    assert vgpu_types.board_for(0x10DE, 0x25B6, 0x10DE, 0x14A9).key == "a16"  # type: ignore[union-attr]
    assert vgpu_types.board_for(0x10DE, 0x25B6, 0x10DE, 0x157E).key == "a2"  # type: ignore[union-attr]
    assert vgpu_types.board_for(0x10DE, 0x25B6) is None  # either board: not told
    assert vgpu_types.board_for(0x10DE, 0x1B38).key == "p40"  # type: ignore[union-attr]
    assert vgpu_types.board_for(0x10DE, 0x1234) is None


def test_profile_names_map_to_type_names() -> None:
    assert vgpu_types.type_key("grid_l40s-4q") == "l40s-4q"
    assert vgpu_types.type_key(" NVIDIA_L40S-4Q ") == "l40s-4q"
    assert vgpu_types.type_key("l40s-4q") == "l40s-4q"


def test_the_coverage_table_in_the_docs_matches_the_data() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "vgpu-types.md").read_text("utf-8")
    assert vgpu_types.with_coverage(doc) == doc, "run scripts/vgpu-types-doc"
    assert "| NVIDIA L40S | `l40s.yaml` | 17, 19 | 29 | all | all | – | – | unknown |" in doc
