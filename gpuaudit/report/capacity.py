"""Geometry of a cluster's GPU capacity picture (inline SVG, drawn by the template).

One row per host, each host drawn once: a large estate's cards stay short. Each
GPU is a bar cut into its vGPU slots (one slot for passthrough): used, free, and,
when a host failure displaces GPU VMs, the slots the restarted VMs would take,
marked in the same bar. Beside the bars, the host's free slots now and after the
worst single-host failure; the failed host's row says it fails. Where vSphere HA
does not restart VMs (HA off, or host monitoring disabled), the marked slots are
where a manual restart would fit, and the chart says so.
Only numbers and names leave this module; the template escapes every name.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuaudit.inventory import Inventory
from gpuaudit.results import ClusterSimulation, GpuSlots

LABEL_W = 200
PANEL_W = 330
AFTER_W = 90  # the column of free slots after the failure
ROW_H = 24
BAR_H = 14
TOP = 30
MAX_BAR_W = 110
GPU_GAP = 6
MIN_CELL = 4  # narrower slots are drawn as one proportional bar


# Characters of a panel title that fit across the panel.
TITLE_CHARS = 48


@dataclass
class Rect:
    x: float
    y: float
    w: float
    h: float
    kind: str  # used-vgpu, used-pt, moved, free, idle, failed


@dataclass
class GpuBar:
    tip: str  # tooltip text (escaped by the template)
    x: float
    y: float
    w: float
    h: float
    rects: list[Rect] = field(default_factory=list)


@dataclass
class HostRow:
    name: str
    label: str  # the name, shortened to fit
    y: float
    failed: bool = False
    no_gpu: bool = False
    now: list[GpuBar] = field(default_factory=list)
    after: list[GpuBar] = field(default_factory=list)
    now_text: str = ""
    after_text: str = ""


@dataclass
class Chart:
    width: float
    height: float
    rows: list[HostRow]
    now_x: float
    after_x: float
    worst_host: str | None
    legend_y: float
    has_after: bool
    manual: bool = False  # HA restarts nothing: the right panel is a manual restart
    restart_disabled: list[str] = field(default_factory=list)  # VMs HA never restarts

    @property
    def after_title(self) -> str:
        what = "manual restart" if self.manual else "HA restart"
        host, suffix = self.worst_host or "", f" fails ({what})"
        # The panel's width holds about TITLE_CHARS: a long host name is cut, never
        # the words that say whether HA restarts anything.
        room = TITLE_CHARS - len("After ") - len(suffix)
        if len(host) > room:
            host = host[: max(room - 1, 1)] + "…"
        return f"After {host}{suffix}"

    @property
    def moved_label(self) -> str:
        return "taken by a manual restart" if self.manual else "taken by restarted VMs"

    @property
    def now_text_x(self) -> float:
        return self.now_x + PANEL_W - 4

    @property
    def after_text_x(self) -> float:
        return self.now_x + PANEL_W + AFTER_W - 4


def _short(name: str, limit: int = 24) -> str:
    return name if len(name) <= limit else name[: limit - 1] + "\u2026"


def _tip(gpu: GpuSlots, before: GpuSlots | None = None) -> str:
    what = gpu.profile or gpu.mode
    text = f"{gpu.host} {gpu.pci_id} {gpu.model} ({what}): {gpu.used} of {gpu.capacity} used"
    if before is not None and gpu.used > before.used:
        text += f", {gpu.used - before.used} by restarted VMs"
    if gpu.vms:
        shown = ", ".join(gpu.vms[:12])
        more = f" and {len(gpu.vms) - 12} more" if len(gpu.vms) > 12 else ""
        text += f". VMs: {shown}{more}"
    return text


def _bar(gpu: GpuSlots, x: float, y: float, w: float, before: GpuSlots | None) -> GpuBar:
    bar = GpuBar(_tip(gpu, before), x, y, w, BAR_H)
    capacity = max(gpu.capacity, 1)
    used = min(max(gpu.used, 0), capacity)
    moved = min(max(used - (before.used if before else used), 0), used)
    stay = used - moved
    full = "used-pt" if gpu.mode == "passthrough" else "used-vgpu"
    kinds = [full] * stay + ["moved"] * moved
    kinds += ["idle" if gpu.mode == "idle" else "free"] * (capacity - used)
    cell = (w - (capacity - 1) * 1.5) / capacity
    if cell >= MIN_CELL:
        for i, kind in enumerate(kinds):
            bar.rects.append(Rect(round(x + i * (cell + 1.5), 2), y, round(cell, 2), BAR_H, kind))
        return bar
    # Too many slots to draw one by one: proportional segments.
    pos = x
    for kind, n in ((full, stay), ("moved", moved), ("free", capacity - used)):
        if n:
            width = w * n / capacity
            bar.rects.append(Rect(round(pos, 2), y, round(width, 2), BAR_H, kind))
            pos += width
    return bar


def _bars(
    gpus: list[GpuSlots],
    x0: float,
    y: float,
    bar_w: float,
    before: dict[str, GpuSlots] | None = None,
) -> list[GpuBar]:
    bars = []
    for i, gpu in enumerate(gpus):
        prior = before.get(gpu.pci_id) if before is not None else None
        bars.append(_bar(gpu, x0 + i * (bar_w + GPU_GAP), y, bar_w, prior))
    return bars


def _free_text(gpus: list[GpuSlots]) -> str:
    capacity = sum(max(g.capacity, 1) for g in gpus)
    used = sum(min(g.used, max(g.capacity, 1)) for g in gpus)
    return f"{capacity - used} free"


def build_chart(sim: ClusterSimulation, inventory: Inventory) -> Chart:
    by_host: dict[str, list[GpuSlots]] = {}
    for gpu in sim.capacity:
        by_host.setdefault(gpu.host, []).append(gpu)
    after_by_host: dict[str, list[GpuSlots]] = {}
    for gpu in sim.after_worst:
        after_by_host.setdefault(gpu.host, []).append(gpu)
    names = [h.name for h in inventory.hosts_in(sim.cluster)]
    names += [n for n in by_host if n not in names]
    most = max((len(g) for g in by_host.values()), default=1)
    bar_w = min(MAX_BAR_W, (PANEL_W - 60 - (most - 1) * GPU_GAP) / max(most, 1))
    now_x = LABEL_W
    # The bars after the failure are the bars now with the restarted VMs' slots
    # marked: they take the place of the bars now, not a second panel.
    after_x = now_x
    has_after = bool(sim.worst_host)
    rows = []
    for i, name in enumerate(names):
        y = TOP + i * ROW_H
        gpus = by_host.get(name, [])
        row = HostRow(name, _short(name), y, failed=name == sim.worst_host, no_gpu=not gpus)
        bar_y = y + (ROW_H - BAR_H) / 2
        row.now = _bars(gpus, now_x, bar_y, bar_w)
        row.now_text = _free_text(gpus) if gpus else "no GPU"
        if has_after and not row.failed:
            after = after_by_host.get(name, gpus if not sim.after_worst else [])
            before = {g.pci_id: g for g in gpus}
            row.after = _bars(after, after_x, bar_y, bar_w, before)
            row.after_text = _free_text(after) if after else "no GPU"
        rows.append(row)
    height = TOP + len(rows) * ROW_H + 34
    width = now_x + PANEL_W + (AFTER_W if has_after else 0)
    return Chart(
        width,
        height,
        rows,
        now_x,
        after_x,
        sim.worst_host,
        height - 16,
        has_after,
        manual=not sim.ha_restarts,
        restart_disabled=list(sim.restart_disabled),
    )
