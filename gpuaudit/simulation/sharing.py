"""Which vGPUs may share one physical GPU: ESXi's rule by release and vGPU mode, and
NVIDIA's published figures per vGPU type (gpuaudit.knowledge.vgpu_types).

ESXi's rule:

- Before ESXi 8.0 U2, a GPU runs vGPUs of exactly one profile: the profile of the
  first vGPU started on it locks the GPU ("exact").
- From 8.0 U2, vGPUs of the same frame-buffer size may share a GPU across series,
  an 8q next to an 8c ("size").
- Different sizes need mixed-size mode, ``HostGraphicsInfo.vgpuMode = mixedSize``,
  which ESXi 8.0 U3 introduced ("mixed"), on a board NVIDIA supports in that mode.
- A GPU in MIG mode (``vgpuMode = multiInstanceGpu``) runs MIG-backed vGPUs only,
  placed by the board's MIG geometry. Where the mode is unreadable (before 8.0 U3),
  a MIG-backed profile means MIG mode, and a GPU never runs both kinds.

A host whose release is unreadable gets the strictest rule ("exact").

NVIDIA's figures decide how many fit, never frame buffer arithmetic:

- equal-size ("exact", "size"): at most the type's "Maximum vGPUs per GPU" vGPUs on
  the GPU, as NVIDIA's Virtual GPU Manager checks it (a new vGPU is refused once the
  GPU runs that type's maxInstance; open-gpu-kernel-modules, kernel_vgpu_mgr.c,
  _kvgpumgrCheckVgpuTypeSupported);
- mixed-size: at most the type's mixed-size maximum, and each vGPU at one of its
  type's placement IDs (start slots) over its placement size, no two overlapping:
  free frame buffer that is not aligned holds no larger type;
- MIG: each instance at one of its profile's start memory slices, within the
  profile's maximum, the GPU's compute slices and one media-extension instance.

Each answer is True, False, or None when the published figures do not decide it: a
type NVIDIA's data does not have, a maximum or placement NVIDIA does not publish, a
board without a data file. Two answers are always certain: one vGPU of a profile the
host offers fits on an empty GPU of its model, and a GPU runs either MIG-backed or
time-sliced vGPUs. The host-failure simulation reads None pessimistically to prove a
pass and optimistically to prove a failure; what lies between is "not proven".

Sources (SOURCES): VMware, "What's new for GPUs in vSphere 8 Update 3" (8.0 U2
same-size series mixing, 8.0 U3 mixed sizes); the vSphere API's
HostGraphicsInfoVgpuMode (since 8.0.3.0); NVIDIA, heterogeneous (mixed-size) vGPU;
NVIDIA's MIG user guide; each figure's own source in gpuaudit/knowledge/vgpu-types.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from gpuaudit.inventory import Gpu, Host
from gpuaudit.knowledge import catalog
from gpuaudit.knowledge.releases import Release, esxi_release
from gpuaudit.knowledge.vgpu_types import BoardFacts, MigTypeFacts, TypeFacts

SOURCES = (
    "https://blogs.vmware.com/cloud-foundation/2024/07/03/what-is-new-for-gpus-in-vsphere-8-update-3",
    "https://developer.broadcom.com/xapis/virtual-infrastructure-json-api/latest/"
    "data-structures/HostGraphicsInfoVgpuMode_enum",
    "https://docs.nvidia.com/ai-enterprise/release-8/latest/infra-software/vgpu/features/"
    "heterogeneous-vgpu.html",
    "https://docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-mig-profiles.html",
)

EXACT = "exact"  # one profile per GPU
SAME_SIZE = "size"  # one frame-buffer size per GPU, any series
MIXED_SIZE = "mixed"  # sizes may differ, at NVIDIA's placements
MIG = "mig"  # MIG-backed vGPUs by MIG geometry

SERIES_MIXING = Release(8, 0, 2)  # same size, different series
MIXED_SIZES = Release(8, 0, 3)  # vgpuMode mixedSize

Placed = Sequence[tuple[str, str, int]]  # (vm, profile, frame buffer MB) on one GPU
Answer = bool | None  # None: NVIDIA's published figures do not decide it

# A MIG-backed profile name: a slice count before the size (grid_a100-3-20c, DC-2-16C).
_MIG_FORM = re.compile(r"^(?:(?:grid|nvidia)_)?[a-z0-9]+(?:-[a-z][a-z0-9]*)*-\d+-\d+[a-z]+$")


@dataclass(frozen=True)
class Told:
    """What vCenter itself says of a vGPU profile (QueryConfigTarget's vgpuProfileInfo):
    its frame buffer in MB and whether it is MIG-backed; None where it says nothing."""

    frame_buffer_mb: int | None
    mig: bool | None


@dataclass(frozen=True)
class GpuRule:
    """What decides what one GPU may run: ESXi's rule, the mode, its board's facts, and
    what vCenter says of the host's profiles."""

    rule: str
    known: bool  # the host reports the GPU's vGPU mode (ESXi 8.0 U3 and later)
    memory: int  # nominal frame buffer in MB
    board: BoardFacts | None  # NVIDIA's published figures; None: no data file
    told: tuple[tuple[str, Told], ...] = ()  # by profile name, lower case (vcenter_told)

    def __hash__(self) -> int:
        """The hash of the fields, as the dataclass's own, computed once: the cached answers
        below (judge, frame_buffer_of) hash the rule hundreds of thousands of times at the
        configuration maximum, and hashing ``told`` anew each time was a good part of it."""
        value: int | None = getattr(self, "_hash", None)
        if value is None:
            value = hash((self.rule, self.known, self.memory, self.board, self.told))
            object.__setattr__(self, "_hash", value)  # frozen: set past the dataclass's guard
        return value

    def says(self, profile: str) -> Told | None:
        """What vCenter says of the profile; None where it says nothing."""
        key = profile.lower()
        return next((t for name, t in self.told if name == key), None)


# One instance per distinct rule. The cached answers below find a rule they met before
# by its identity before its fields: a GPU's own copy of an equal rule was compared field
# by field on each of the 800,000 lookups of the configuration maximum's check.
_RULES: dict[GpuRule, GpuRule] = {}
_MAX_RULES = 4096  # distinct rules are a handful per estate; a bound all the same


def gpu_rule(
    rule: str,
    known: bool,
    memory: int,
    board: BoardFacts | None,
    told: tuple[tuple[str, Told], ...] = (),
) -> GpuRule:
    """The GpuRule of these facts: the same instance for equal facts."""
    new = GpuRule(rule, known, memory, board, told)
    if len(_RULES) >= _MAX_RULES:
        _RULES.clear()
    return _RULES.setdefault(new, new)


def vcenter_told(host: Host) -> tuple[tuple[str, Told], ...]:
    """What vCenter says of each vGPU profile the host offers, by lower-case name."""
    told = []
    for p in host.vgpu_profiles:
        fb = p.frame_buffer_gib * 1024 if p.frame_buffer_gib else None
        mig = {"mig": True, "timeSliced": False}.get(p.sharing or "")
        if fb is not None or mig is not None:
            told.append((p.name.lower(), Told(fb, mig)))
    return tuple(sorted(told))


def policy(host: Host, gpu: Gpu) -> str:
    """The sharing rule of one GPU, from its host's release and its vGPU mode."""
    if gpu.vgpu_mode == "multiInstanceGpu":
        return MIG
    release = esxi_release(host.version, host.build)
    model = catalog.model_for(gpu.vendor_id, gpu.device_id, gpu.device_name)
    mixed_capable = model is None or model.mixed_size
    newer = release is None or release >= MIXED_SIZES  # the mode exists from 8.0 U3
    if gpu.vgpu_mode == "mixedSize" and mixed_capable and newer:
        return MIXED_SIZE
    if release is not None and release >= SERIES_MIXING:
        return SAME_SIZE
    return EXACT


def mode_known(gpu: Gpu) -> bool:
    """The host reports the GPU's vGPU mode (ESXi 8.0 U3 and later)."""
    return bool(gpu.vgpu_mode)


def nominal_memory(gpu: Gpu) -> int:
    """The frame buffer in MB: the catalogue's nominal size, else what the host reports."""
    model = catalog.model_for(gpu.vendor_id, gpu.device_id, gpu.device_name)
    if model is not None:
        return model.memory_mb
    return gpu.memory_mb


@lru_cache(maxsize=8192)
def is_mig(profile: str) -> bool:
    """A MIG-backed profile, by its name's form (a slice count before the size)."""
    return _MIG_FORM.match(profile.strip().lower()) is not None


def _time_sliced(board: BoardFacts | None, profile: str) -> TypeFacts | None:
    return board.type_for(profile) if board is not None else None


def _mig(board: BoardFacts | None, profile: str) -> MigTypeFacts | None:
    return board.mig_for(profile) if board is not None else None


def frame_buffer(board: BoardFacts | None, profile: str) -> int | None:
    """A type's frame buffer in MB as NVIDIA publishes it; None when unknown."""
    facts = _time_sliced(board, profile)
    if facts is not None:
        return facts.frame_buffer_mb
    mig = _mig(board, profile)
    return mig.frame_buffer_mb if mig is not None else None


@lru_cache(maxsize=65536)
def frame_buffer_of(gpu: GpuRule, profile: str) -> int | None:
    """A vGPU's frame buffer in MB: NVIDIA's figure and vCenter's, the larger where both
    are known (the stricter for capacity); None when neither is. Cached: the simulation
    asks it of the same few GPUs and profiles for every placement it weighs."""
    told = gpu.says(profile)
    figures = [f for f in (frame_buffer(gpu.board, profile), told and told.frame_buffer_mb) if f]
    return max(figures) if figures else None


def _mig_side(gpu: GpuRule, profile: str) -> bool:
    """Whether a profile is MIG-backed: vCenter says (profileSharing), else the board's
    facts, else its name's form."""
    told = gpu.says(profile)
    if told is not None and told.mig is not None:
        return told.mig
    if _mig(gpu.board, profile) is not None:
        return True
    if _time_sliced(gpu.board, profile) is not None:
        return False
    return is_mig(profile)


def judge(gpu: GpuRule, placed: Placed, profile: str, seated: int | None = None) -> Answer:
    """Can a GPU with ``placed`` on it take one more vGPU of ``profile``?

    The first ``seated`` of ``placed`` (all by default) ran before: where they sit is
    unknown. The others arrived since, as the new one does, each where ESXi chose.
    """
    profiles = [p for _, p, _ in placed]
    cut = len(profiles) if seated is None else seated
    # The simulation asks about the same few combinations hundreds of thousands of times
    # at the configuration maximum; the answer depends on neither list's order.
    return _judge(gpu, tuple(sorted(profiles[:cut])), tuple(sorted(profiles[cut:])), profile)


@lru_cache(maxsize=65536)
def _judge(
    gpu: GpuRule, running: tuple[str, ...], arrived: tuple[str, ...], profile: str
) -> Answer:
    profiles = [*running, *arrived]
    mig_new = _mig_side(gpu, profile)
    mig_any = any(_mig_side(gpu, p) for p in profiles)
    if gpu.rule == MIG or (not gpu.known and (mig_new or mig_any)):
        if not mig_new or not all(_mig_side(gpu, p) for p in profiles):
            return False  # a GPU runs either MIG-backed or time-sliced vGPUs
        return True if not profiles else _judge_mig(gpu.board, profiles, profile, len(running))
    if mig_new:
        return False  # a time-sliced GPU
    if not profiles:
        return True  # one vGPU of an offered profile fits an empty GPU of its model
    if gpu.rule == MIXED_SIZE:
        return _judge_mixed(gpu, profiles, profile, len(running))
    return _judge_equal(gpu, profiles, profile)


def _judge_equal(gpu: GpuRule, profiles: list[str], profile: str) -> Answer:
    if gpu.rule == EXACT and any(p != profile for p in profiles):
        return False  # before 8.0 U2 the first vGPU locks the GPU to its profile
    sizes = [frame_buffer_of(gpu, p) for p in [*profiles, profile]]
    if any(s is None for s in sizes):
        return None
    if len(set(sizes)) > 1:
        return False  # equal-size mode: one frame-buffer size per GPU
    facts = _time_sliced(gpu.board, profile)
    size = sizes[-1] or 0
    if (len(profiles) + 1) * size > gpu.memory:
        return False
    if facts is None or facts.max_per_gpu is None:
        return None
    return len(profiles) + 1 <= facts.max_per_gpu


def _judge_mixed(gpu: GpuRule, profiles: list[str], profile: str, running: int) -> Answer:
    every = [*profiles, profile]
    facts = [_time_sliced(gpu.board, p) for p in every]
    known = [f for f in facts if f is not None]
    if any(f.mixed_allowed is False for f in known):
        return False  # NVIDIA allows the type in equal-size mode only
    if sum(f.frame_buffer_mb or 0 for f in known) > gpu.memory:
        return False
    counts = Counter(f.name for f in known)
    if any(f.max_per_gpu_mixed is not None and counts[f.name] > f.max_per_gpu_mixed for f in known):
        return False
    if len(known) < len(facts):
        return None
    if all(f.placement_size is not None and f.placement_ids is not None for f in known):
        items = [(f.placement_size or 0, f.placement_ids or ()) for f in known]
        return _placed(items[:running], items[running:], _placement_slots(gpu.board))
    if len(counts) == 1 and known[0].max_per_gpu_mixed is not None:
        return True  # one type, within NVIDIA's mixed-size maximum for it
    return None


def _placement_slots(board: BoardFacts | None) -> int:
    """A GPU's placement slots in mixed-size mode: as far as its largest placement reaches."""
    types = board.types.values() if board is not None else ()
    return max(
        (max(f.placement_ids) + (f.placement_size or 0) for f in types if f.placement_ids),
        default=0,
    )


def _judge_mig(board: BoardFacts | None, placed: list[str], profile: str, running: int) -> Answer:
    profiles = [*placed, profile]
    found = [_mig(board, p) for p in profiles]
    if board is None or board.mig is None or any(f is None for f in found):
        return None
    mig = board.mig
    known = [f for f in found if f is not None]
    counts = Counter(f.mig for f in known)
    if any(counts[f.mig] > f.maximum for f in known):
        return False
    if sum(1 for f in known if f.media) > 1:
        return False  # one set of media engines per GPU
    if mig.compute is not None and sum(f.compute for f in known) > mig.compute:
        return False
    spans = [f.span for f in known]
    if mig.slices is not None and all(s is not None for s in spans):
        if sum(s or 0 for s in spans) > mig.slices:
            return False
        if all(f.starts is not None for f in known):
            items = [(f.span or 0, f.starts or ()) for f in known]
            return _placed(items[:running], items[running:], mig.slices)
    if len(counts) == 1:
        return True  # instances of one profile, within NVIDIA's maximum for it
    return None


Item = tuple[int, tuple[int, ...]]  # (span in slots, the slots it may start at)
MAX_LAYOUTS = 20_000  # layouts of the running vGPUs weighed at most, then: undecided


def _largest(item: Item) -> tuple[int, tuple[int, ...]]:
    return (-item[0], item[1])


def _placed(running: list[Item], arrived: list[Item], slots: int) -> Answer:
    """Do ``arrived`` (the last one new) fit next to ``running`` at NVIDIA's placements?

    Where each running vGPU or MIG instance sits is the manager's choice, and no API
    reports it; where each arriving one lands is the manager's choice too, in an order
    HA does not fix. So the answer is True only if, whatever the running ones' layout,
    the order of arrival and the spot each arrival takes, every arrival finds a spot;
    False if no layout holds them all; else None.
    """
    base = tuple(sorted(running, key=_largest))
    if not _layouts(base, slots):
        return None  # too many layouts to weigh, or the figures place the running ones nowhere
    if not _fits_somewhere(tuple(sorted([*running, *arrived], key=_largest)), slots):
        return False
    return True if _every_arrival_fits(base, tuple(sorted(arrived, key=_largest)), slots) else None


@lru_cache(maxsize=65536)
def _fits_somewhere(items: tuple[Item, ...], slots: int) -> bool:
    """Does some layout hold all ``items``? A search that stops at the first one, so
    that the answer needs no list of every layout (which MAX_LAYOUTS bounds)."""
    tried: set[tuple[int, int]] = set()  # (items placed, occupancy) that led nowhere

    def place(i: int, used: int) -> bool:
        if i == len(items):
            return True
        if (i, used) in tried:
            return False
        span, starts = items[i]
        for s in starts:
            window = ((1 << span) - 1) << s
            if s + span <= slots and not used & window and place(i + 1, used | window):  # noqa: F821 (its cycle is deleted below)
                return True
        tried.add((i, used))
        return False

    found = place(0, 0)
    del place  # a nested function calling itself is a reference cycle: broken
    return found


@lru_cache(maxsize=65536)
def _every_arrival_fits(running: tuple[Item, ...], arrived: tuple[Item, ...], slots: int) -> bool:
    """Whatever arrived before it, each arrival fits every layout of what is there: for
    each part of the arrivals and each other arrival, every layout of the running ones
    and that part leaves the other a spot."""
    for size in range(len(arrived)):
        for part in set(itertools.combinations(arrived, size)):
            rest = list(arrived)
            for item in part:
                rest.remove(item)
            layouts = _layouts(tuple(sorted([*running, *part], key=_largest)), slots)
            if not layouts:  # none (a part that never fits), or too many to weigh
                return False
            for span, starts in set(rest):
                windows = [((1 << span) - 1) << s for s in starts if s + span <= slots]
                if not all(any(not layout & w for w in windows) for layout in layouts):
                    return False
    return True


@lru_cache(maxsize=65536)
def _layouts(items: tuple[Item, ...], slots: int) -> frozenset[int] | None:
    """Every occupancy of the slots (a bit per slot) with all ``items`` placed: empty when
    there is none, None when there are more than MAX_LAYOUTS to weigh."""
    layouts = {0}
    for span, starts in items:
        windows = [((1 << span) - 1) << s for s in starts if s + span <= slots]
        layouts = {layout | w for layout in layouts for w in windows if not layout & w}
        if len(layouts) > MAX_LAYOUTS:
            return None
        if not layouts:
            break
    return frozenset(layouts)


# How many more of a profile fit: the spare capacity a report shows and the search's
# bound. Optimistically an undecided answer is a yes, so the count stops at this cap,
# which is no figure of NVIDIA's, only a bound above every one of them.
ROOM_CAP = 64


def room(
    gpu: GpuRule,
    placed: Placed,
    profile: str,
    optimistic: bool = False,
    seated: int | None = None,
) -> int:
    """How many more vGPUs of ``profile`` the GPU takes, on its own: counting only the
    proven ones, or, ``optimistic``, the undecided ones too. ``seated`` as for judge."""
    more = list(placed)
    cut = len(placed) if seated is None else seated
    while len(more) - len(placed) < ROOM_CAP:
        answer = judge(gpu, more, profile, cut)
        if not (answer or (optimistic and answer is None)):
            break
        more.append(("", profile, 0))
    return len(more) - len(placed)


def refusal(gpu: GpuRule, placed: Placed, profile: str, seated: int | None = None) -> str:
    """Why the GPU's sharing rule keeps the vGPU off it; "" when it does not, or when
    only a full GPU does."""
    if not placed or judge(gpu, placed, profile, seated) is not False:
        return ""
    running = sorted({p for _, p, _ in placed})
    mig_new = _mig_side(gpu, profile)
    if gpu.rule == MIG or (not gpu.known and (mig_new or any(_mig_side(gpu, p) for p in running))):
        if not mig_new or not all(_mig_side(gpu, p) for p in running):
            return "a GPU runs either MIG-backed or time-sliced vGPUs, not both"
        return f"no MIG placement left next to {', '.join(running)} (NVIDIA's MIG geometry)"
    if mig_new:
        return "the GPU is not in MIG mode"
    facts = _time_sliced(gpu.board, profile)
    if gpu.rule == MIXED_SIZE:
        if facts is not None and facts.mixed_allowed is False:
            return f"NVIDIA allows {facts.name} in equal-size mode only"
        most = facts.max_per_gpu_mixed if facts is not None else None
        same = sum(1 for _, p, _ in placed if p == profile)
        if facts is not None and most is not None and same + 1 > most:
            return f"NVIDIA allows {most} of {facts.name} per GPU in mixed-size mode"
        return (
            f"no placement left for {profile} next to {', '.join(running)} (NVIDIA's placement IDs)"
        )
    if gpu.rule == EXACT and any(p != profile for p in running):
        if len({frame_buffer_of(gpu, p) for p in [*running, profile]}) == 1:
            return f"it runs {', '.join(running)}, and before ESXi 8.0 U2 a GPU runs one profile"
        return ""
    if facts is not None and facts.max_per_gpu is not None and len(placed) >= facts.max_per_gpu:
        return f"NVIDIA allows {facts.max_per_gpu} of {facts.name} per GPU"
    return ""  # one of another size in equal-size mode, or a full frame buffer: capacity


def unknown(gpu: GpuRule, placed: Placed, profile: str, seated: int | None = None) -> str:
    """What NVIDIA's published figures lack to decide the vGPU on this GPU; "" if nothing."""
    if judge(gpu, placed, profile, seated) is not None:
        return ""
    board = gpu.board
    if board is None:
        return f"gpuaudit has no NVIDIA vGPU type data for the board of {profile}"
    running = sorted({p for _, p, _ in placed})
    every = sorted({*running, profile})
    missing = [p for p in every if _time_sliced(board, p) is None and _mig(board, p) is None]
    if missing:
        return f"NVIDIA's {board.name} vGPU types include no {', '.join(missing)}"
    layout = (
        f"whether {profile} fits next to {', '.join(running)} on {board.name} depends on where "
        "ESXi placed each of them, which no API reports"
    )
    migs = [m for p in every if (m := _mig(board, p)) is not None]
    if gpu.rule == MIG or migs:
        placed_known = board.mig is not None and board.mig.slices is not None
        if placed_known and all(m.starts is not None and m.span is not None for m in migs):
            return layout
        return f"NVIDIA publishes no MIG placements for {', '.join(every)} on {board.name}"
    facts = [f for p in every if (f := _time_sliced(board, p)) is not None]
    if gpu.rule == MIXED_SIZE:
        if all(f.placement_ids is not None and f.placement_size is not None for f in facts):
            return layout
        return f"NVIDIA publishes no mixed-size placements for {', '.join(every)} on {board.name}"
    if any(f.frame_buffer_mb is None for f in facts):
        return f"NVIDIA publishes no frame buffer for {', '.join(every)} on {board.name}"
    return f"NVIDIA publishes no maximum per GPU for {profile} on {board.name}"
