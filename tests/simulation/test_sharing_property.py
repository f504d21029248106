"""The sharing rule on one GPU against brute force, on every board of NVIDIA's data.

For each board in gpuaudit/knowledge/vgpu-types, random sets of vGPUs already on a GPU (some
running before, where they sit unknown; some arrived since) and one more: the answer
of sharing.judge must be what enumeration of every placement says, from the board's
published figures:

- equal-size mode: one frame-buffer size per GPU, the type's "Maximum vGPUs per GPU",
  the frame buffer;
- mixed-size mode: the mixed-size maximum per type, each vGPU at one of its placement
  IDs over its placement size, none overlapping, whatever the layout of the running
  ones, the order of the arrivals and the spot each takes (True); no layout at all
  (False); else undecided (None);
- MIG: the instances per GPU, one media-extension instance, the compute slices, and
  each instance on one of its start slices over its memory slices, as above. Where a
  board's MIG start slices are not published, only one profile within its maximum is
  proven, and a refusal must break a published count.

The enumeration (layouts, survives, placeable) is tests/simulation/test_failures_property.py's.
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from gpuaudit.knowledge import vgpu_types
from gpuaudit.knowledge.vgpu_types import BoardFacts, MigTypeFacts, TypeFacts
from gpuaudit.simulation import sharing
from gpuaudit.simulation.sharing import MIG, MIXED_SIZE, SAME_SIZE, GpuRule
from tests.simulation.test_failures_property import Spot, layouts, placeable

SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    # Explaining a failure traces every line of the brute force: minutes, not seconds.
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
)
BOARDS = vgpu_types.boards()
MIG_BOARDS = [b for b in BOARDS if b.mig is not None and any(p.vgpu for p in b.mig.profiles)]
MIXED_BOARDS = [
    b for b in BOARDS if any(t.placement_ids and t.placement_size for t in b.types.values())
]
EQUAL_BOARDS = [
    b for b in BOARDS if b.frame_buffer_mb and any(t.frame_buffer_mb for t in b.types.values())
]
Answer = bool | None


def profile_name(type_name: str) -> str:
    return f"nvidia_{type_name.lower()}"


def draw_gpu(
    data: st.DataObject, names: list[str], most: int
) -> tuple[list[tuple[str, str, int]], int, str]:
    running = data.draw(st.lists(st.sampled_from(names), max_size=most))
    seated = data.draw(st.integers(0, len(running)))
    new = data.draw(st.sampled_from(names))
    return [(f"vm{i}", p, 0) for i, p in enumerate(running)], seated, new


def verdict(proven: bool, possible: bool) -> Answer:
    return True if proven else False if not possible else None


# Equal-size mode ---------------------------------------------------------------------


def equal_expected(board: BoardFacts, types: list[TypeFacts], memory: int) -> Answer:
    sizes = {t.frame_buffer_mb for t in types}
    if None in sizes:
        return None
    if len(sizes) > 1:
        return False
    if len(types) * (types[0].frame_buffer_mb or 0) > memory:
        return False
    most = types[-1].max_per_gpu
    return None if most is None else len(types) <= most


@pytest.mark.parametrize("board", EQUAL_BOARDS, ids=lambda b: b.key)
@SETTINGS
@given(data=st.data())
def test_equal_size_matches_the_published_maximums(board: BoardFacts, data: st.DataObject) -> None:
    memory = board.frame_buffer_mb or 0
    usable = [t for t in board.types.values() if t.frame_buffer_mb]
    names = [profile_name(t.name) for t in usable]
    placed, seated, new = draw_gpu(data, names, 40)
    rule = GpuRule(SAME_SIZE, True, memory, board)
    types = [board.type_for(p) for _, p, _ in placed] + [board.type_for(new)]
    assert all(t is not None for t in types)
    expected = True if not placed else equal_expected(board, types, memory)  # type: ignore[arg-type]
    assert sharing.judge(rule, placed, new, seated) is expected


# Mixed-size mode ---------------------------------------------------------------------


def slots_of(board: BoardFacts) -> int:
    return max(
        max(t.placement_ids) + (t.placement_size or 0)
        for t in board.types.values()
        if t.placement_ids
    )


def mixed_expected(board: BoardFacts, types: list[TypeFacts], seated: int, memory: int) -> Answer:
    if any(t.mixed_allowed is False for t in types):
        return False
    if sum(t.frame_buffer_mb or 0 for t in types) > memory:
        return False
    counts = Counter(t.name for t in types)
    if any(t.max_per_gpu_mixed is not None and counts[t.name] > t.max_per_gpu_mixed for t in types):
        return False
    spots = [(t.placement_size or 0, t.placement_ids or ()) for t in types]
    slots = slots_of(board)
    return verdict(
        placeable(spots[:seated], spots[seated:], slots, optimistic=False),
        placeable(spots[:seated], spots[seated:], slots, optimistic=True),
    )


@pytest.mark.parametrize("board", MIXED_BOARDS, ids=lambda b: b.key)
@SETTINGS
@given(data=st.data())
def test_mixed_size_matches_brute_force_over_the_placements(
    board: BoardFacts, data: st.DataObject
) -> None:
    memory = board.frame_buffer_mb or 0
    placed_types = [
        t
        for t in board.types.values()
        if t.placement_ids and t.placement_size and t.frame_buffer_mb
    ]
    names = [profile_name(t.name) for t in placed_types]
    placed, seated, new = draw_gpu(data, names, 4)  # brute force over every layout: keep it small
    rule = GpuRule(MIXED_SIZE, True, memory, board)
    types = [board.type_for(p) for _, p, _ in placed] + [board.type_for(new)]
    expected = True if not placed else mixed_expected(board, types, seated, memory)  # type: ignore[arg-type]
    answer = sharing.judge(rule, placed, new, seated)
    if answer is None and expected is True:
        # Proving it means weighing every layout of the running vGPUs with each part of
        # the arrivals; beyond sharing.MAX_LAYOUTS of them the answer is "not proven".
        spots = [(t.placement_size or 0, t.placement_ids or ()) for t in types]  # type: ignore[union-attr]
        assert beyond_bound(spots[:seated], spots[seated:], slots_of(board))
    else:
        assert answer is expected


def beyond_bound(running: list[Spot], arrived: list[Spot], slots: int) -> bool:
    """Whether the running vGPUs and some part of the arrivals have more layouts than
    sharing.MAX_LAYOUTS (counted here, by brute force)."""
    return any(
        len(layouts(running + list(part), slots)) > sharing.MAX_LAYOUTS
        for size in range(len(arrived))
        for part in set(combinations(arrived, size))
    )


# MIG ---------------------------------------------------------------------------------


def mig_counts_hold(board: BoardFacts, profiles: list[MigTypeFacts]) -> bool:
    mig = board.mig
    assert mig is not None
    counts = Counter(p.mig for p in profiles)
    if any(counts[p.mig] > p.maximum for p in profiles):
        return False
    if sum(1 for p in profiles if p.media) > 1:
        return False
    if mig.compute is not None and sum(p.compute for p in profiles) > mig.compute:
        return False
    return not (
        mig.slices is not None
        and all(p.span is not None for p in profiles)
        and sum(p.span or 0 for p in profiles) > mig.slices
    )


@pytest.mark.parametrize("board", MIG_BOARDS, ids=lambda b: b.key)
@SETTINGS
@given(data=st.data())
def test_mig_matches_brute_force_over_the_start_slices(
    board: BoardFacts, data: st.DataObject
) -> None:
    mig = board.mig
    assert mig is not None
    named = [p for p in mig.profiles if p.vgpu]
    names = [profile_name(p.vgpu or "") for p in named]
    placed, seated, new = draw_gpu(data, names, 7)
    rule = GpuRule(MIG, True, board.frame_buffer_mb or 0, board)
    profiles = [board.mig_for(p) for _, p, _ in placed] + [board.mig_for(new)]
    assert all(p is not None for p in profiles)
    found: list[MigTypeFacts] = [p for p in profiles if p is not None]
    answer = sharing.judge(rule, placed, new, seated)
    if not placed:
        assert answer is True  # one instance on an empty GPU in MIG mode
        return
    if not mig_counts_hold(board, found):
        assert answer is False
        return
    geometry = mig.slices is not None and all(p.span and p.starts for p in found)
    if geometry:
        spots = [(p.span or 0, p.starts or ()) for p in found]
        slots = mig.slices or 0
        expected = verdict(
            placeable(spots[:seated], spots[seated:], slots, optimistic=False),
            placeable(spots[:seated], spots[seated:], slots, optimistic=True),
        )
        assert answer is expected
    elif len({p.mig for p in found}) == 1:
        assert answer is True  # one profile within NVIDIA's maximum for it
    else:
        assert answer is None  # where the instances sit decides, and it is not published


def test_every_board_with_mig_is_covered() -> None:
    # The MIG boards of NVIDIA's data, named here so that a board added to the data
    # without MIG profiles the property can draw shows up.
    assert {b.key for b in MIG_BOARDS} >= {
        "a100-pcie-40gb",
        "a100-pcie-80gb",
        "a100-hgx-40gb",
        "a100-hgx-80gb",
        "a30",
        "h100-pcie-80gb",
        "h100-sxm5-80gb",
        "h100-nvl-94gb",
        "h200-nvl-141gb",
        "h200-sxm-141gb",
    }
