"""gpuaudit.simulation.sharing on one GPU at a time: each answer against figures written out here.

The board below is a 48 GB board whose time-sliced Q types carry NVIDIA's published
figures for 48 GB boards (NVIDIA Virtual GPU Software User Guide r17, A.1.6 "NVIDIA
L40S Virtual GPU Types" for the maximums, A.3.4 "vGPU Placements for GPUs with 48 GB of
Frame Buffer" for the mixed-size placements, in GB-sized slots):

    type  frame buffer  max equal-size  max mixed-size  placement size  placement ids
    48Q   48 GB         1               1               48              0
    24Q   24 GB         2               2               24              0, 24
    16Q   16 GB         3               2               16              0, 32
    8Q     8 GB         6               4                8              0, 16, 24, 40
    4Q     4 GB        12               8                4              0, 8, 12, 20, 24, 32, 36, 44

and, to reach the branches NVIDIA's real rows never take, types whose figures are
partly unpublished or that NVIDIA allows in equal-size mode only (as it does, for
example, every M10 type), each written out below.
"""

from __future__ import annotations

import pytest
import yaml

from gpuaudit.knowledge.vgpu_types import BoardFacts, parse_board
from gpuaudit.simulation import sharing
from gpuaudit.simulation.sharing import EXACT, MIXED_SIZE, SAME_SIZE, GpuRule, judge, room

GB = 1024
UNKNOWN, NOT_ALLOWED = "unknown", "none"
COMMON = {
    "mixed_size": {"supported": True, "source": "ug"},
    "mmio_c_series_gb": {"value": UNKNOWN, "source": UNKNOWN},
    "bar1_mb": {"value": UNKNOWN, "source": UNKNOWN},
    "live_migration": {"group": UNKNOWN, "source": UNKNOWN},
    "nvlink": {"value": UNKNOWN, "source": UNKNOWN},
    "sources": {
        "ug": {
            "title": "NVIDIA Virtual GPU Software User Guide r17",
            "url": "https://docs.nvidia.com/grid/17.0/grid-vgpu-user-guide/index.html",
        },
        "mig": {
            "title": "NVIDIA Multi-Instance GPU User Guide",
            "url": "https://docs.nvidia.com/datacenter/tesla/mig-user-guide/",
        },
    },
}
# name, frame buffer MB, maximum in equal-size mode, in mixed-size mode, placement size,
# placement ids
X_TYPES: list[tuple[str, int, object, object, object, object]] = [
    ("X-48Q", 49152, 1, 1, 48, [0]),
    ("X-24Q", 24576, 2, 2, 24, [0, 24]),
    ("X-24C", 24576, 2, 2, 24, [0, 24]),
    ("X-16Q", 16384, 3, 2, 16, [0, 32]),
    ("X-8Q", 8192, 6, 4, 8, [0, 16, 24, 40]),
    ("X-4Q", 4096, 12, 8, 4, [0, 8, 12, 20, 24, 32, 36, 44]),
    ("X-3Q", 3072, UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN),
    ("X-2Q", 2048, 24, NOT_ALLOWED, UNKNOWN, UNKNOWN),
    ("X-6Q", 6144, 8, 3, UNKNOWN, UNKNOWN),
    ("X-1Q", 1024, 32, 4, 1, [0, 8, 16, 24, 32, 40]),
    ("X-7Q", 7168, 6, 6, 8, UNKNOWN),
    ("X-5Q", UNKNOWN, 9, UNKNOWN, UNKNOWN, UNKNOWN),
]


def board(key: str, name: str, memory_mb: int, types: list[dict], **more: object) -> BoardFacts:
    data = {
        "board": key.upper(),
        "name": name,
        "pci_device_ids": [0xFFF0],
        "frame_buffer_mb": memory_mb,
        "architecture": "ada",
        **COMMON,
        "types": types,
        **more,
    }
    return parse_board(key, yaml.safe_dump(data))


BOARD = board(
    "x",
    "Test board with 48 GB",
    48 * GB,
    [
        {
            "name": name,
            "series": name[-1],
            "frame_buffer_mb": fb,
            "max_per_gpu": most,
            "max_per_gpu_mixed": mixed,
            "placement_size": size,
            "placement_ids": ids,
            "source": "ug",
        }
        for name, fb, most, mixed, size, ids in X_TYPES
    ],
)


def gpu(rule: str, known: bool = True) -> GpuRule:
    return GpuRule(rule, known, 48 * GB, BOARD)


def on(*profiles: str) -> list[tuple[str, str, int]]:
    return [(f"vm{i}", p, 0) for i, p in enumerate(profiles)]


# Equal-size mode ------------------------------------------------------------------


def test_before_802_a_gpu_runs_one_profile_even_of_one_size() -> None:
    assert judge(gpu(EXACT), on("grid_x-24q"), "grid_x-24q") is True
    assert judge(gpu(EXACT), on("grid_x-24q"), "grid_x-24c") is False
    assert judge(gpu(SAME_SIZE), on("grid_x-24q"), "grid_x-24c") is True


def test_equal_size_mode_holds_one_size() -> None:
    assert judge(gpu(SAME_SIZE), on("grid_x-24q"), "grid_x-16q") is False


@pytest.mark.parametrize(("running", "answer"), [(11, True), (12, False)])
def test_equal_size_stops_at_nvidias_maximum(running: int, answer: bool) -> None:
    # NVIDIA: at most 12 4Q vGPUs on a 48 GB GPU in equal-size mode.
    assert judge(gpu(SAME_SIZE), on(*["grid_x-4q"] * running), "grid_x-4q") is answer


def test_without_a_published_maximum_only_a_full_frame_buffer_decides() -> None:
    # 3 GB each: sixteen fill 48 GB, a seventeenth cannot fit; below that NVIDIA's
    # maximum, which it does not publish for this type, would decide.
    assert judge(gpu(SAME_SIZE), on(*["grid_x-3q"] * 15), "grid_x-3q") is None
    assert judge(gpu(SAME_SIZE), on(*["grid_x-3q"] * 16), "grid_x-3q") is False
    assert room(gpu(SAME_SIZE), on(*["grid_x-3q"] * 15), "grid_x-3q") == 0
    assert room(gpu(SAME_SIZE), on(*["grid_x-3q"] * 10), "grid_x-3q", optimistic=True) == 6


def test_an_unknown_type_in_equal_size_mode_is_undecided() -> None:
    assert judge(gpu(SAME_SIZE), on("grid_x-4q"), "grid_x-99q") is None


# Mixed-size mode ------------------------------------------------------------------


def test_a_type_nvidia_allows_in_equal_size_mode_only_never_joins_a_mixed_gpu() -> None:
    assert judge(gpu(MIXED_SIZE), on("grid_x-4q"), "grid_x-2q") is False
    assert judge(gpu(MIXED_SIZE), on("grid_x-2q"), "grid_x-4q") is False


def test_frame_buffer_that_adds_up_to_the_gpu_fits_where_the_placements_allow() -> None:
    # 24 + 16 + 8 = 48: 24Q at 0 and 16Q at 32 leave 8Q its id 24; 24Q at 24 and 16Q
    # at 0 leave it id 16. Either way it fits.
    assert judge(gpu(MIXED_SIZE), on("grid_x-24q", "grid_x-16q"), "grid_x-8q") is True
    # 24 + 24 + 4 > 48.
    assert judge(gpu(MIXED_SIZE), on("grid_x-24q", "grid_x-24q"), "grid_x-4q") is False


def test_free_frame_buffer_off_the_placements_holds_nothing_larger() -> None:
    # Two 4Q vGPUs at ids 20 and 44 (arrived, so ESXi's choice is known to be any)
    # leave 40 GB free, but a 24Q needs id 0 or 24 with 24 GB from there.
    assert judge(gpu(MIXED_SIZE), on("grid_x-4q", "grid_x-4q"), "grid_x-24q", seated=2) is None
    assert judge(gpu(MIXED_SIZE), on("grid_x-16q", "grid_x-16q"), "grid_x-24q") is False


def test_eight_4q_fill_the_gpu_up_to_its_last_placement() -> None:
    # The eighth 4Q takes the one id left, 44: the GPU's slots reach 48.
    assert judge(gpu(MIXED_SIZE), on(*["grid_x-4q"] * 7), "grid_x-4q") is True
    assert judge(gpu(MIXED_SIZE), on(*["grid_x-4q"] * 8), "grid_x-4q") is False


@pytest.mark.parametrize(("running", "answer"), [(3, True), (4, False)])
def test_mixed_size_stops_at_nvidias_mixed_maximum(running: int, answer: bool) -> None:
    # X-1Q: six placements of 1 GB, but at most 4 per GPU in mixed-size mode.
    assert judge(gpu(MIXED_SIZE), on(*["grid_x-1q"] * running), "grid_x-1q") is answer


def test_a_type_nvidia_gives_no_placements_for() -> None:
    # One type alone, within its mixed-size maximum of 3: NVIDIA's maximum decides.
    assert judge(gpu(MIXED_SIZE), on("grid_x-6q", "grid_x-6q"), "grid_x-6q") is True
    assert judge(gpu(MIXED_SIZE), on(*["grid_x-6q"] * 3), "grid_x-6q") is False
    # Beside another type, where it sits decides, and NVIDIA does not say.
    assert judge(gpu(MIXED_SIZE), on("grid_x-24q"), "grid_x-6q") is None
    assert judge(gpu(MIXED_SIZE), on("grid_x-6q"), "grid_x-24q") is None


def test_a_type_the_board_does_not_have_is_undecided_in_mixed_size_mode() -> None:
    assert judge(gpu(MIXED_SIZE), on("grid_x-24q"), "grid_x-99q") is None
    assert judge(gpu(MIXED_SIZE), on("grid_x-99q"), "grid_x-4q") is None


def test_the_placement_slots_reach_as_far_as_the_largest_placement() -> None:
    assert sharing._placement_slots(BOARD) == 48
    assert sharing._placement_slots(None) == 0


# What the reports say about a refusal or an unknown --------------------------------


def test_refusals_name_nvidias_rule() -> None:
    assert sharing.refusal(gpu(MIXED_SIZE), on("grid_x-4q"), "grid_x-2q") == (
        "NVIDIA allows X-2Q in equal-size mode only"
    )
    assert sharing.refusal(gpu(MIXED_SIZE), on(*["grid_x-1q"] * 4), "grid_x-1q") == (
        "NVIDIA allows 4 of X-1Q per GPU in mixed-size mode"
    )
    assert sharing.refusal(gpu(SAME_SIZE), on(*["grid_x-4q"] * 12), "grid_x-4q") == (
        "NVIDIA allows 12 of X-4Q per GPU"
    )
    assert sharing.refusal(gpu(EXACT), on("grid_x-24q"), "grid_x-24c") == (
        "it runs grid_x-24q, and before ESXi 8.0 U2 a GPU runs one profile"
    )


def test_unknowns_name_the_missing_figure() -> None:
    assert sharing.unknown(gpu(SAME_SIZE), on("grid_x-3q"), "grid_x-3q") == (
        "NVIDIA publishes no maximum per GPU for grid_x-3q on Test board with 48 GB"
    )
    assert sharing.unknown(gpu(MIXED_SIZE), on("grid_x-24q"), "grid_x-6q") == (
        "NVIDIA publishes no mixed-size placements for grid_x-24q, grid_x-6q on Test board "
        "with 48 GB"
    )
    assert sharing.unknown(gpu(MIXED_SIZE), on("grid_x-24q"), "grid_x-99q") == (
        "NVIDIA's Test board with 48 GB vGPU types include no grid_x-99q"
    )
    assert sharing.unknown(GpuRule(SAME_SIZE, True, 48 * GB, None), on("a"), "b") == (
        "gpuaudit has no NVIDIA vGPU type data for the board of b"
    )


# MIG ------------------------------------------------------------------------------
# A 40 GB board with NVIDIA's A100 40GB MIG geometry (NVIDIA Multi-Instance GPU User
# Guide, "A100 MIG Profiles" and "A100 supported placements"; 7 compute and 8 memory
# slices):
#
#     profile    compute  memory slices  max  start slices
#     1g.5gb     1        1              7    0-6
#     1g.5gb+me  1        1              1    0-6
#     2g.10gb    2        2              3    0, 2, 4
#     3g.20gb    3        4              2    0, 4
#     4g.20gb    4        4              1    0
#     7g.40gb    7        8              1    0
#
# and a profile whose placements NVIDIA does not publish (Y-2-12C), written out here.
# MIG profile, its vGPU type, frame buffer MB, compute slices, memory slices, maximum,
# start slices, media engines
Y_MIGS: list[tuple[str, str, int, int, int, int, object, bool]] = [
    ("1g.5gb", "Y-1-5C", 5120, 1, 1, 7, [0, 1, 2, 3, 4, 5, 6], False),
    ("1g.5gb+me", "Y-1-5CME", 5120, 1, 1, 1, [0, 1, 2, 3, 4, 5, 6], True),
    ("2g.10gb", "Y-2-10C", 10240, 2, 2, 3, [0, 2, 4], False),
    ("3g.20gb", "Y-3-20C", 20480, 3, 4, 2, [0, 4], False),
    ("4g.20gb", "Y-4-20C", 20480, 4, 4, 1, [0], False),
    ("7g.40gb", "Y-7-40C", 40960, 7, 8, 1, [0], False),
    ("2g.12gb", "Y-2-12C", 12288, 2, 2, 3, UNKNOWN, False),
    ("4g.10gb", "Y-4-10C", 10240, 4, 2, 2, [0, 2, 4, 6], False),
]


def mig_board(key: str, name: str, memory_slices: object = 8) -> BoardFacts:
    """A 40 GB MIG board of the profiles of Y_MIGS (their types named after ``key``)."""
    letter = key.upper()
    return board(
        key,
        name,
        40 * GB,
        [
            {
                "name": f"{letter}-40C",
                "series": "C",
                "frame_buffer_mb": 40 * GB,
                "max_per_gpu": 1,
                "max_per_gpu_mixed": NOT_ALLOWED,
                "source": "ug",
            }
        ],
        mig={
            "compute_slices": 7,
            "memory_slices": memory_slices,
            "source": "mig",
            "profiles": [
                {
                    "mig": profile,
                    "vgpu": vgpu.replace("Y-", f"{letter}-"),
                    "frame_buffer_mb": fb,
                    "compute": compute,
                    "memory_slices": span,
                    "max_per_gpu": most,
                    "placements": starts,
                    "media": media,
                    "source": "mig",
                }
                for profile, vgpu, fb, compute, span, most, starts, media in Y_MIGS
            ],
        },
    )


MIG_BOARD = mig_board("y", "Test MIG board with 40 GB")


def mig(known: bool = True, board: object = MIG_BOARD) -> GpuRule:
    return GpuRule(sharing.MIG if known else SAME_SIZE, known, 40 * GB, board)  # type: ignore[arg-type]


@pytest.mark.parametrize(("running", "answer"), [(6, True), (7, False)])
def test_seven_one_slice_instances_and_no_eighth(running: int, answer: bool) -> None:
    assert judge(mig(), on(*["grid_y-1-5c"] * running), "grid_y-1-5c") is answer


def test_one_set_of_media_engines_per_gpu() -> None:
    assert judge(mig(), on("grid_y-1-5cme"), "grid_y-1-5c") is True
    assert judge(mig(), on("grid_y-1-5cme"), "grid_y-1-5cme") is False


def test_compute_slices_run_out_before_memory_slices() -> None:
    # 4g + 2g: six compute slices of seven, six memory slices of eight; a 2g needs two
    # more compute slices.
    assert judge(mig(), on("grid_y-4-20c", "grid_y-2-10c"), "grid_y-2-10c") is False
    assert judge(mig(), on("grid_y-4-20c", "grid_y-2-10c"), "grid_y-1-5c") is True


def test_start_slices_decide_where_memory_is_left() -> None:
    # A 3g starts at slice 0 or 4 and spans four: beside a 3g and a 2g, neither is free.
    assert judge(mig(), on("grid_y-3-20c", "grid_y-2-10c"), "grid_y-3-20c") is False
    assert judge(mig(), on("grid_y-3-20c"), "grid_y-3-20c") is True
    assert judge(mig(), on("grid_y-7-40c"), "grid_y-1-5c") is False


def test_a_gpu_runs_either_mig_backed_or_time_sliced_vgpus() -> None:
    assert judge(mig(), on("grid_y-1-5c"), "grid_y-40c") is False
    assert judge(mig(), on("grid_y-40c"), "grid_y-1-5c") is False
    # Where the host does not report the mode, a MIG-backed profile means MIG mode.
    assert judge(mig(known=False), on("grid_y-1-5c"), "grid_y-1-5c") is True
    assert judge(mig(known=False), on("grid_y-1-5c"), "grid_y-40c") is False
    assert judge(mig(known=False), [], "grid_y-1-5c") is True


def test_mig_without_published_placements() -> None:
    # Instances of one profile within NVIDIA's maximum fit; beside others, unknown.
    assert judge(mig(), on("grid_y-2-12c", "grid_y-2-12c"), "grid_y-2-12c") is True
    assert judge(mig(), on(*["grid_y-2-12c"] * 3), "grid_y-2-12c") is False
    assert judge(mig(), on("grid_y-1-5c"), "grid_y-2-12c") is None
    assert sharing.unknown(mig(), on("grid_y-1-5c"), "grid_y-2-12c") == (
        "NVIDIA publishes no MIG placements for grid_y-1-5c, grid_y-2-12c on Test MIG board "
        "with 40 GB"
    )


def test_a_mig_board_without_data_is_undecided() -> None:
    assert judge(mig(board=None), on("grid_y-1-5c"), "grid_y-1-5c") is None
    assert judge(mig(), on("grid_y-1-5c"), "grid_y-9-99c") is None


def test_mig_refusals_and_unknowns_name_the_reason() -> None:
    assert sharing.refusal(mig(), on("grid_y-1-5c"), "grid_y-40c") == (
        "a GPU runs either MIG-backed or time-sliced vGPUs, not both"
    )
    assert sharing.refusal(mig(), on(*["grid_y-1-5c"] * 7), "grid_y-1-5c") == (
        "no MIG placement left next to grid_y-1-5c (NVIDIA's MIG geometry)"
    )
    # A 4g starts only at slice 0: free if the running 1g sits at 4 to 6, not at 0 to 3.
    assert judge(mig(), on("grid_y-1-5c"), "grid_y-4-20c") is None
    assert sharing.unknown(mig(), on("grid_y-1-5c"), "grid_y-4-20c") == (
        "whether grid_y-4-20c fits next to grid_y-1-5c on Test MIG board with 40 GB depends "
        "on where ESXi placed each of them, which no API reports"
    )


# What vCenter says of a profile ----------------------------------------------------


def told(**profiles: sharing.Told) -> GpuRule:
    return GpuRule(SAME_SIZE, True, 48 * GB, BOARD, tuple(sorted(profiles.items())))


def test_vcenters_frame_buffer_is_taken_where_larger_or_alone() -> None:
    rule = told(
        **{"grid_x-24q": sharing.Told(48 * GB, False), "grid_x-99q": sharing.Told(8 * GB, None)}
    )
    assert rule.says("GRID_X-24Q") == sharing.Told(48 * GB, False)
    assert rule.says("grid_x-4q") is None
    assert sharing.frame_buffer_of(rule, "grid_x-24q") == 48 * GB  # vCenter's, the larger
    assert sharing.frame_buffer_of(rule, "grid_x-99q") == 8 * GB  # vCenter's alone
    assert sharing.frame_buffer_of(rule, "grid_x-4q") == 4 * GB  # NVIDIA's alone
    assert sharing.frame_buffer_of(rule, "grid_x-98q") is None
    smaller = told(**{"grid_x-24q": sharing.Told(16 * GB, None)})
    assert sharing.frame_buffer_of(smaller, "grid_x-24q") == 24 * GB  # NVIDIA's, the larger
    # One 24Q of 48 GB fills the GPU; an 8 GB type of another size never joins a 24Q.
    assert judge(rule, on("grid_x-24q"), "grid_x-24q") is False
    assert judge(rule, on("grid_x-24q"), "grid_x-99q") is False


def test_vcenter_says_which_profiles_are_mig_backed() -> None:
    rule = told(**{"grid_x-99q": sharing.Told(None, True), "grid_x-4q": sharing.Told(None, True)})
    assert sharing._mig_side(rule, "grid_x-99q") is True
    assert sharing._mig_side(rule, "grid_x-4q") is True  # vCenter's word over the table's
    assert sharing._mig_side(rule, "grid_x-8q") is False  # the table's
    assert sharing._mig_side(rule, "grid_x-2-10c") is True  # the name's form
    assert judge(rule, on("grid_x-8q"), "grid_x-99q") is False


def test_what_vcenter_says_of_a_hosts_profiles() -> None:
    from gpuaudit.inventory import Host, VgpuProfile

    host = Host(
        name="h",
        moref="h",
        vgpu_profiles=[
            VgpuProfile("GRID_X-8Q", frame_buffer_gib=8, sharing="timeSliced"),
            VgpuProfile("grid_x-2-10c", sharing="mig"),
            VgpuProfile("grid_x-4q"),
            VgpuProfile("grid_x-1q", frame_buffer_gib=0, sharing="other"),
        ],
    )
    assert sharing.vcenter_told(host) == (
        ("grid_x-2-10c", sharing.Told(None, True)),
        ("grid_x-8q", sharing.Told(8 * GB, False)),
    )


# More edges -----------------------------------------------------------------------


def test_equal_size_maximum_below_what_the_frame_buffer_holds() -> None:
    # X-1Q: 1 GB each, at most 32 per GPU though 48 would fit the frame buffer.
    assert judge(gpu(SAME_SIZE), on(*["grid_x-1q"] * 31), "grid_x-1q") is True
    assert judge(gpu(SAME_SIZE), on(*["grid_x-1q"] * 32), "grid_x-1q") is False


def test_mixed_frame_buffer_beyond_the_gpu_is_refused_without_placements() -> None:
    # 24 + 24 + 6 > 48, although X-6Q has no published placements.
    assert judge(gpu(MIXED_SIZE), on("grid_x-24q", "grid_x-24q"), "grid_x-6q") is False


def test_a_placement_size_without_placement_ids_places_nothing() -> None:
    assert judge(gpu(MIXED_SIZE), on("grid_x-24q"), "grid_x-7q") is None
    assert sharing.unknown(gpu(MIXED_SIZE), on("grid_x-24q"), "grid_x-7q") == (
        "NVIDIA publishes no mixed-size placements for grid_x-24q, grid_x-7q on Test board "
        "with 48 GB"
    )


def test_compute_slices_alone_refuse_an_instance() -> None:
    # Two Y-4-10C: 4 of 8 memory slices, but 8 compute slices of 7.
    assert judge(mig(), on("grid_y-4-10c"), "grid_y-4-10c") is False
    assert judge(mig(), on("grid_y-4-10c"), "grid_y-2-10c") is True


def test_unknown_is_empty_where_the_figures_decide() -> None:
    assert sharing.unknown(gpu(SAME_SIZE), on("grid_x-4q"), "grid_x-4q") == ""
    assert sharing.unknown(gpu(SAME_SIZE), [], "grid_x-99q") == ""


def test_unknown_names_every_missing_type_and_every_running_profile() -> None:
    assert sharing.unknown(gpu(MIXED_SIZE), on("grid_x-98q"), "grid_x-99q") == (
        "NVIDIA's Test board with 48 GB vGPU types include no grid_x-98q, grid_x-99q"
    )
    assert sharing.unknown(gpu(SAME_SIZE), on("grid_x-5q"), "grid_x-5q") == (
        "NVIDIA publishes no frame buffer for grid_x-5q on Test board with 48 GB"
    )
    assert sharing.unknown(gpu(SAME_SIZE), on("grid_x-4q"), "grid_x-5q") == (
        "NVIDIA publishes no frame buffer for grid_x-4q, grid_x-5q on Test board with 48 GB"
    )
    running = on("grid_y-1-5c", "grid_y-2-10c")
    assert judge(mig(), running, "grid_y-4-20c") is None
    assert sharing.unknown(mig(), running, "grid_y-4-20c") == (
        "whether grid_y-4-20c fits next to grid_y-1-5c, grid_y-2-10c on Test MIG board with "
        "40 GB depends on where ESXi placed each of them, which no API reports"
    )


def test_unknown_on_a_gpu_whose_mode_is_not_reported() -> None:
    # Before 8.0 U3 the mode is unreadable: MIG-form names mean MIG all the same.
    assert judge(mig(known=False), on("grid_y-1-5c"), "grid_y-4-20c") is None
    assert sharing.unknown(mig(known=False), on("grid_y-1-5c"), "grid_y-4-20c") == (
        "whether grid_y-4-20c fits next to grid_y-1-5c on Test MIG board with 40 GB depends "
        "on where ESXi placed each of them, which no API reports"
    )


def test_no_layout_is_a_refusal_even_past_the_layouts_weighed() -> None:
    """Seventeen 3-slot vGPUs on a 48-slot GPU (the A40's 3Q at its 16 placements) fit
    no layout: a refusal, though the layouts of the first sixteen alone are beyond
    MAX_LAYOUTS to weigh."""
    three_q = (3, tuple(range(0, 48, 3)))
    assert sharing._placed([], [three_q] * 17, 48) is False
    assert sharing._fits_somewhere((three_q,) * 16, 48) is True
    assert sharing._fits_somewhere((three_q,) * 17, 48) is False
    one_q = (1, (0, 47))  # two places only
    assert sharing._fits_somewhere((one_q, one_q), 48) is True
    assert sharing._fits_somewhere((one_q, one_q, one_q), 48) is False
    assert sharing._fits_somewhere(((2, (47,)),), 48) is False  # runs past the last slot


def test_a_types_frame_buffer_is_the_figure_written_out_above() -> None:
    # Time-sliced: Y-40C, 40 GB; MIG-backed: Y-3-20C, 20,480 MB, Y-2-12C 12,288 MB (the
    # table above); a type the board does not list, or no board, has none.
    assert sharing.frame_buffer(MIG_BOARD, "grid_y-40c") == 40 * GB
    assert sharing.frame_buffer(MIG_BOARD, "grid_y-3-20c") == 20480
    assert sharing.frame_buffer(MIG_BOARD, "grid_y-2-12c") == 12288
    assert sharing.frame_buffer(MIG_BOARD, "grid_y-9-99c") is None
    assert sharing.frame_buffer(None, "grid_y-3-20c") is None
    assert sharing.frame_buffer(BOARD, "grid_x-8q") == 8192


def test_a_mig_board_whose_memory_slices_nvidia_does_not_give_has_no_placements() -> None:
    # The MIG profiles of the board above, on a board whose count of memory slices is not
    # published: every profile's own start slices are known, but not the slices they share.
    z_board = mig_board("z", "Test MIG board of unknown slices", memory_slices=UNKNOWN)
    z = GpuRule(sharing.MIG, True, 40 * GB, z_board)
    running = on("grid_z-1-5c", "grid_z-1-5c", "grid_z-1-5c")
    assert judge(z, running, "grid_z-3-20c") is None
    assert sharing.unknown(z, running, "grid_z-3-20c") == (
        "NVIDIA publishes no MIG placements for grid_z-1-5c, grid_z-3-20c on "
        "Test MIG board of unknown slices"
    )


def test_equal_facts_give_one_rule_instance() -> None:
    # The cached answers find a rule by identity first: every GPU of one board, release
    # and mode shares one instance; any field that differs makes another.
    told = (("grid_l4-8q", sharing.Told(8192, False)),)
    first = sharing.gpu_rule(SAME_SIZE, True, 24 * GB, BOARD, told)
    assert sharing.gpu_rule(SAME_SIZE, True, 24 * GB, BOARD, told) is first
    assert first == GpuRule(SAME_SIZE, True, 24 * GB, BOARD, told)
    others = [
        sharing.gpu_rule(EXACT, True, 24 * GB, BOARD, told),
        sharing.gpu_rule(SAME_SIZE, False, 24 * GB, BOARD, told),
        sharing.gpu_rule(SAME_SIZE, True, 48 * GB, BOARD, told),
        sharing.gpu_rule(SAME_SIZE, True, 24 * GB, None, told),
        sharing.gpu_rule(SAME_SIZE, True, 24 * GB, BOARD),
    ]
    assert all(o is not first and o != first for o in others)
    assert len({id(o) for o in others}) == len(others)
