"""Stranded capacity: per GPU in Shared Direct mode on an active host, the frame buffer
that is free but that no vGPU profile offered in its cluster can use, summed per cluster.

Free is the GPU's nominal frame buffer less that of the vGPUs running on it (NVIDIA's
figure per type, gpuaudit.simulation.sharing.frame_buffer_of). Usable is the most frame buffer that
more vGPUs of the cluster's offered profiles add to the GPU, mixed in any way, each one
admitted by the placement model the failure simulation uses (gpuaudit.simulation.sharing.judge:
ESXi's rule per release and vGPU mode, NVIDIA's maximum per GPU, mixed-size placement
IDs, MIG geometry), whatever the layout the running vGPUs have and whatever the spot each
new one takes. Stranded is free less usable: the frame buffer that even the best mix of
the offered profiles leaves idle.

It fails closed. Where NVIDIA's published figures leave an answer undecided (a type the
board's data lacks, a running vGPU whose frame buffer is unknown, a layout no API
reports) and reading it as a yes would let more frame buffer be used, or where there are
more combinations than MAX_STEPS to weigh, the GPU's stranded figure is not known (None)
with the reason, never 0; the cluster's sum counts only the known figures and says how
many are not known.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuaudit.inventory import Cluster
from gpuaudit.model.facts import Facts
from gpuaudit.results import ClusterStranded, GpuStranded
from gpuaudit.simulation import sharing
from gpuaudit.simulation.failures import ClusterModel, Slot, _demand

# Frame-buffer checks in one GPU's search at most; beyond, the figure is not known.
MAX_STEPS = 20_000


class _TooMany(Exception):
    """The search weighed MAX_STEPS combinations without an answer."""


@dataclass
class _Search:
    steps: int = 0
    undecided: str = ""  # why the first undecided answer was undecided
    memo: dict[tuple[str, ...], int] = field(default_factory=dict)


def stranded_all(facts: Facts) -> list[ClusterStranded]:
    """The stranded capacity of every cluster with a GPU."""
    return [stranded(facts, c) for c in facts.clusters_with_gpus()]


def stranded(facts: Facts, cluster: Cluster) -> ClusterStranded:
    model = ClusterModel(facts, cluster.name)
    active = [h for h, node in model.nodes.items() if node.active]
    offered = sorted(set().union(*(model.nodes[h].offers for h in active)))
    out = ClusterStranded(cluster.name, offered)
    # Interchangeable GPUs running the same vGPUs have the same answer: a large cluster of
    # one model asks it once per distinct load, not once per GPU.
    seen: dict[tuple[object, ...], tuple[int | None, int | None, str]] = {}
    for host in active:
        for slot in model.initial[host]:
            if not slot.vgpu_ok:
                continue
            running = tuple(sorted(p for _, p, _ in slot.vgpus))
            key = (slot.static, running)
            if key not in seen:
                seen[key] = gpu_stranded(slot, offered)
            free, left, reason = seen[key]
            out.gpus.append(
                GpuStranded(
                    host=host,
                    gpu=slot.pci_id,
                    gpu_model=slot.model,
                    mode=slot.share.rule,
                    frame_buffer_mb=slot.memory,
                    vgpus=list(running),
                    free_mb=free,
                    stranded_mb=left,
                    reason=reason,
                )
            )
    out.stranded_mb = sum(g.stranded_mb or 0 for g in out.gpus)
    out.not_known = sum(1 for g in out.gpus if g.stranded_mb is None)
    if not offered:
        out.notes.append("no active host of the cluster reports a vGPU profile it offers")
    if out.not_known:
        out.notes.append(
            f"{out.not_known} GPU(s) with a stranded figure not known: the sum is at least "
            f"{out.stranded_mb} MB"
        )
    return out


def gpu_stranded(slot: Slot, offered: list[str]) -> tuple[int | None, int | None, str]:
    """(free MB, stranded MB, why) of one GPU with what runs on it now; stranded None when
    it is not known, and then the reason says why."""
    share = slot.share
    running = [p for _, p, _ in slot.vgpus]
    sizes = {p: sharing.frame_buffer_of(share, p) for p in running}
    known = {p: s for p, s in sizes.items() if s is not None}
    lacking = sorted(set(sizes) - set(known))
    if lacking:
        return None, None, f"no frame buffer is known for {', '.join(lacking)} on {slot.model}"
    if slot.memory <= 0:  # a board the inventory gives no frame buffer: nothing is known
        return None, None, f"the frame buffer of {slot.model} is not known"
    # No less than nothing where the inventory puts more on the GPU than it holds.
    free = max(slot.memory - sum(known[p] for p in running), 0)
    if not free:
        return free, 0, ""
    if not offered:
        return free, None, "the cluster's hosts report no vGPU profile they offer"
    candidates = [p for p in offered if slot.compatible(_demand("vgpu", p, None, []))]
    if not candidates:
        return free, free, f"no vGPU profile offered in the cluster is for {slot.model}"
    proven = _Search()
    try:
        used, best = _most(share, running, candidates, free, free, False, proven)
        if used < free:
            more, _ = _most(share, running, candidates, free, used + 1, True, _Search())
            if more > used:
                # The optimistic search went where an undecided answer let it, which the
                # proven search reached too, and noted.
                return free, None, proven.undecided
    except _TooMany:
        return (
            free,
            None,
            f"more than {MAX_STEPS} combinations of the offered profiles to weigh",
        )
    left = free - used
    return free, left, _why_idle(share, running, best, candidates, left) if left else ""


def _most(
    share: sharing.GpuRule,
    running: list[str],
    candidates: list[str],
    free: int,
    target: int,
    optimistic: bool,
    search: _Search,
) -> tuple[int, tuple[str, ...]]:
    """The most frame buffer more vGPUs of ``candidates`` add to the GPU, and which ones:
    each admitted by sharing.judge after the ones before it (undecided answers admitted
    too, ``optimistic``). The search stops once it reaches ``target``."""
    size = {p: sharing.frame_buffer_of(share, p) for p in candidates}
    # Largest first: a GPU filled by one large profile is answered at the first step.
    order = sorted(candidates, key=lambda p: (-(size[p] or 0), p))
    best: tuple[int, tuple[str, ...]] = (0, ())

    def walk(start: int, arrived: list[str], used: int) -> bool:
        nonlocal best
        if used > best[0]:
            best = (used, tuple(arrived))
        if best[0] >= target:
            return True
        placed = _placed([*running, *arrived])
        for i in range(start, len(order)):
            search.steps += 1
            if search.steps > MAX_STEPS:
                raise _TooMany
            profile = order[i]
            answer = sharing.judge(share, placed, profile, len(running))
            if answer is None:
                search.undecided = search.undecided or sharing.unknown(
                    share, placed, profile, len(running)
                )
            if not (answer or (optimistic and answer is None)):
                continue
            fb = size[profile]
            if fb is None:
                search.undecided = search.undecided or f"no frame buffer is known for {profile}"
                # A type whose frame buffer is unknown may use whatever is left.
                fb = free - used if optimistic else None
            # vCenter may say a type takes more than NVIDIA's figure (frame_buffer_of takes
            # the larger): never more than is free.
            if fb is None or used + fb > free:
                continue
            # Candidates in order, each from where the last one was: every mix once.
            if walk(i, [*arrived, profile], used + fb):  # noqa: F821 (its cycle is deleted below)
                return True
        return False

    try:
        walk(0, [], 0)
    finally:
        del walk  # a nested function calling itself is a reference cycle: broken
    return best


def _why_idle(
    share: sharing.GpuRule,
    running: list[str],
    added: tuple[str, ...],
    candidates: list[str],
    left: int,
) -> str:
    """Why no offered profile takes the frame buffer left after the best mix."""
    profiles = [*running, *added]
    sizes = {sharing.frame_buffer_of(share, p) for p in profiles}
    reasons = []
    for profile in candidates:
        if not profiles:
            # An empty GPU takes one vGPU of any time-sliced profile, or of any MIG-backed
            # one in MIG mode: one of the other kind is all the best mix leaves out.
            why = "a GPU runs either MIG-backed or time-sliced vGPUs, not both"
        elif (
            share.rule in (sharing.EXACT, sharing.SAME_SIZE)
            and {sharing.frame_buffer_of(share, profile)} != sizes
        ):
            why = "equal-size mode runs one frame-buffer size per GPU"
        else:
            # The sharing rule's refusal, or, where it takes it, the frame buffer it
            # takes by vCenter's figure, larger than NVIDIA's (frame_buffer_of).
            why = sharing.refusal(share, _placed(profiles), profile, len(running)) or (
                f"it takes {sharing.frame_buffer_of(share, profile)} MB"
            )
        reasons.append(f"{profile}: {why}")
    return f"{left} MB free that no profile offered in the cluster can use ({'; '.join(reasons)})"


def _placed(profiles: list[str]) -> sharing.Placed:
    """vGPUs of these profiles on one GPU, as sharing.judge reads them (by profile only)."""
    return [("", p, 0) for p in profiles]
