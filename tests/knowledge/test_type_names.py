"""gpuaudit/knowledge/type_names.py: every published form of an NVIDIA vGPU type name, by hand.

Figures: NVIDIA's vGPU user guides ("Virtual GPU Types": M60-2B4 2048 MB, P40-1B4
1024 MB, T4-2B4 2048 MB; GRID K1 K120Q 512 MB ... K280Q 4096 MB) and NVIDIA AI
Enterprise 8's Blackwell types (DC-2-16C, 16 GB on two MIG slices; DC-32C 32 GB).
"""

from __future__ import annotations

import pytest

from gpuaudit.knowledge import catalog
from gpuaudit.knowledge.type_names import Reading, read


@pytest.mark.parametrize(
    ("name", "reading"),
    [
        ("grid_m60-2b4", Reading("m60", 2048, "b")),
        ("grid_p40-1b4", Reading("p40", 1024, "b")),
        ("grid_t4-2b4", Reading("t4", 2048, "b")),
        ("nvidia_m10-1b4", Reading("m10", 1024, "b")),
        ("grid_m60-2b", Reading("m60", 2048, "b")),
        ("grid_m60-0q", Reading("m60", 512, "q")),
        ("grid_k120q", Reading("k1", 512, "q")),
        ("grid_k140q", Reading("k1", 1024, "q")),
        ("grid_k160q", Reading("k1", 2048, "q")),
        ("grid_k180q", Reading("k1", 4096, "q")),
        ("grid_k220q", Reading("k2", 512, "q")),
        ("grid_k240q", Reading("k2", 1024, "q")),
        ("grid_k260q", Reading("k2", 2048, "q")),
        ("GRID_K280Q", Reading("k2", 4096, "q")),
        ("DC-2-16C", Reading("dc", 16384, "c", 2)),
        ("DC-32C", Reading("dc", 32768, "c")),
        ("nvidia_dc-1-8c", Reading("dc", 8192, "c", 1)),
        ("grid_dc-4c", Reading("dc", 4096, "c")),
        ("DC-1C", Reading("dc", 1024, "c")),  # the smallest size a DC- name can give
        ("dc-24q", Reading("dc", 24576, "q")),
        ("nvidia_l40s-48q", Reading("l40s", 49152, "q")),
        ("grid_a100-3-20c", Reading("a100", 20480, "c", 3)),
        ("grid_a100-1-5cme", Reading("a100", 5120, "c", 1)),
        ("grid_rtx6000-ada-48q", Reading("rtx6000-ada", 49152, "q")),
        (" grid_l4-4a ", Reading("l4", 4096, "a")),
    ],
)
def test_published_forms(name: str, reading: Reading) -> None:
    assert read(name) == reading
    info = catalog.parse_profile(name)
    assert info is not None
    assert (info.gpu, info.memory_mb, info.series, info.mig_slices) == (
        reading.board,
        reading.memory_mb,
        reading.series,
        reading.mig_slices,
    )


@pytest.mark.parametrize(
    "name",
    [
        "grid_m60-2q4",  # only B types come with four displays
        "grid_m60-2c4",
        "grid_m60-2b5",
        "grid_l4-4qme",  # media extensions are MIG-backed
        "grid_k100",  # no series letter
        "grid_k200",
        "grid_k130q",
        "grid_k320q",
        "grid_k120b",
        "k120q",
        "DC-0C",
        "DC-16",
        "dc-2-16x",
        "xx_dc-16c",
        "grid_l4-custom",
        "l4-4q",
        "grid_l4-4qq",
        "",
    ],
)
def test_other_forms_are_not_read(name: str) -> None:
    assert read(name) is None
    assert catalog.parse_profile(name) is None
