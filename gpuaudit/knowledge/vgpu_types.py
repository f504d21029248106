"""NVIDIA's published facts per vGPU type, board by board: the data capacity rests on.

One YAML file per board in ``gpuaudit/knowledge/vgpu-types/`` holds what NVIDIA publishes
for it: every vGPU type with its frame buffer and maximum instances per GPU (in
equal-size mode, and in mixed-size mode with its placement size and placement IDs),
the board's MIG geometry (each MIG profile with its compute and memory slices, its
maximum and its allowed start slices), the 64-bit MMIO a C-series vGPU needs, BAR1,
the live-migration group, NVLink, and the vGPU releases whose type tables list the
board. Every figure names its source (document, section, URL). Where NVIDIA publishes
no figure the file says ``unknown``, and so does every verdict that needs it: the
simulation never falls back to frame buffer arithmetic for a type it does not find.

A type named ``L40S-4Q`` appears on ESXi as the profile ``grid_l40s-4q`` (older and
newer releases also use ``nvidia_``): the profile is the type name in lower case
behind that prefix. Blackwell's ``DC-`` type names do not name the board, so a type
is always looked up on a board.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache, lru_cache
from importlib import resources
from typing import Any, Generic, TypeVar

import yaml

from gpuaudit.knowledge import catalog

T = TypeVar("T")

UNKNOWN = "unknown"  # how a data file says NVIDIA publishes no figure
NVSWITCH = "nvswitch"  # an NVLink fabric that links every GPU of the system to every other
FABRICS = (NVSWITCH,)  # the NVLink fabrics a data file may name
NOT_ALLOWED = "none"  # a type NVIDIA does not allow in mixed-size mode
DATA = "vgpu-types"
_PREFIX = re.compile(r"^(?:grid|nvidia)_")


class VgpuDataError(ValueError):
    """A data file that breaks the format: a figure without a source, a bad value."""


@dataclass(frozen=True)
class Source:
    """Where a figure is published."""

    key: str
    title: str
    url: str


@dataclass(frozen=True)
class Fact(Generic[T]):
    """One published figure, or None where NVIDIA publishes none (``unknown``)."""

    value: T | None
    source: Source | None = None

    @property
    def known(self) -> bool:
        return self.value is not None


@dataclass(frozen=True)
class TypeFacts:
    """One time-sliced vGPU type of a board, as NVIDIA's "Virtual GPU Types" table gives it."""

    name: str  # as NVIDIA writes it: L40S-4Q
    series: str  # Q, B, A, C
    frame_buffer_mb: int | None  # None: NVIDIA's table was not available
    max_per_gpu: int | None  # equal-size mode; None: unknown
    # Mixed-size mode: the maximum, None when unknown; ``mixed_allowed`` False when NVIDIA
    # does not allow the type in that mode at all.
    max_per_gpu_mixed: int | None
    mixed_allowed: bool | None
    placement_size: int | None  # mixed-size placement size in slots; None: unknown
    placement_ids: tuple[int, ...] | None  # mixed-size start slots; None: unknown
    source: Source

    @property
    def key(self) -> str:
        return self.name.lower()


@dataclass(frozen=True)
class MigTypeFacts:
    """A MIG profile of a board and the MIG-backed vGPU type that runs on it."""

    mig: str  # the MIG user guide's name: 1g.10gb, 1g.10gb+me
    vgpu: str | None  # the vGPU type: H100XM-1-10C; None when NVIDIA names none
    frame_buffer_mb: int | None
    compute: int  # compute slices
    span: int | None  # memory slices covered; None: unknown
    maximum: int  # instances per GPU
    starts: tuple[int, ...] | None  # allowed start memory slices; None: unknown
    media: bool  # takes the GPU's media engines (+me)
    source: Source

    @property
    def key(self) -> str | None:
        return self.vgpu.lower() if self.vgpu else None


@dataclass(frozen=True)
class MigFacts:
    compute: int | None  # compute slices per GPU; None: unknown
    slices: int | None  # memory slices per GPU; None: unknown
    profiles: tuple[MigTypeFacts, ...]
    source: Source


@dataclass(frozen=True, eq=False)  # one object per board file: hashed by identity
class BoardFacts:
    """What NVIDIA publishes about one board's vGPU types."""

    key: str  # the file's name: l40s
    board: str  # the type names' prefix: L40S
    name: str  # NVIDIA L40S
    device_ids: tuple[int, ...]
    subsystems: tuple[tuple[int, int], ...]  # where one device id names several boards
    frame_buffer_mb: int | None  # one GPU's; None where NVIDIA's table was not available
    gpus_per_board: int
    architecture: str
    branches: tuple[int, ...]  # vGPU releases whose type tables list the board
    mixed_size: Fact[bool]
    mmio_c_series_gb: Fact[int]
    bar1_mb: Fact[int]
    live_migration: Fact[str]
    nvlink: Fact[bool]
    types: Mapping[str, TypeFacts]  # by lower-case type name
    mig: MigFacts | None
    sources: Mapping[str, Source] = field(default_factory=dict)
    # The NVLink fabric between the board's GPUs in one system: "nvswitch" (a crossbar:
    # every GPU reaches every other); None where NVIDIA's documents do not say.
    nvlink_fabric: Fact[str] = Fact(None)

    @property
    def nvswitch(self) -> bool:
        """NVIDIA says the board's GPUs are on an NVSwitch fabric: in one system, every
        GPU of the board reaches every other over NVLink."""
        return self.nvlink_fabric.value == NVSWITCH

    def type_for(self, profile: str) -> TypeFacts | None:
        """The time-sliced type of an ESXi profile name (grid_l40s-4q), or None."""
        return self.types.get(type_key(profile))

    def mig_for(self, profile: str) -> MigTypeFacts | None:
        """The MIG profile a MIG-backed ESXi profile (grid_a100-3-20c) runs on, or None."""
        if self.mig is None:
            return None
        key = type_key(profile)
        return next((p for p in self.mig.profiles if p.key == key), None)


def type_key(profile: str) -> str:
    """An ESXi profile name as a type key: grid_l40s-4q and nvidia_l40s-4q -> l40s-4q."""
    return _PREFIX.sub("", profile.strip().lower())


# Loading


def _int(value: Any, where: str) -> int | None:
    if value == UNKNOWN or value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise VgpuDataError(f"{where}: expected a whole number or 'unknown', not {value!r}")
    return value


def _ints(value: Any, where: str) -> tuple[int, ...] | None:
    if value == UNKNOWN or value is None:
        return None
    if not isinstance(value, list):
        raise VgpuDataError(f"{where}: expected a list of whole numbers or 'unknown'")
    out = tuple(_int(v, where) for v in value)
    if any(v is None for v in out):
        raise VgpuDataError(f"{where}: expected a list of whole numbers")
    return tuple(v for v in out if v is not None)


class _Reader:
    """Reads one board file; every figure must name a source of the file."""

    def __init__(self, key: str, data: Any) -> None:
        if not isinstance(data, dict):
            raise VgpuDataError(f"{key}: a board file is a mapping")
        self.key = key
        self.data = data
        raw = data.get("sources")
        if not isinstance(raw, dict) or not raw:
            raise VgpuDataError(f"{key}: no sources")
        self.sources: dict[str, Source] = {}
        for name, item in raw.items():
            if not isinstance(item, dict):
                raise VgpuDataError(f"{key}: source {name}: expected title and url")
            title, url = item.get("title"), item.get("url")
            if not isinstance(title, str) or not title.strip():
                raise VgpuDataError(f"{key}: source {name}: no title")
            if not isinstance(url, str) or not url.startswith("https://"):
                raise VgpuDataError(f"{key}: source {name}: no https URL")
            self.sources[str(name)] = Source(str(name), title, url)

    def source(self, item: Any, where: str) -> Source:
        name = item.get("source") if isinstance(item, dict) else None
        if name not in self.sources:
            raise VgpuDataError(f"{self.key}: {where}: no source, or one the file does not list")
        self.also(item, where)
        return self.sources[name]

    def also(self, item: dict[str, Any], where: str) -> None:
        """Further sources a row names (placement_source, source_also): each one listed."""
        for key, value in item.items():
            if key == "source" or not (key.endswith("_source") or key == "source_also"):
                continue
            for name in value if isinstance(value, list) else [value]:
                if name not in self.sources and name != UNKNOWN:
                    raise VgpuDataError(f"{self.key}: {where}: {key} {name!r} is not a source")

    def fact(self, name: str, kind: type) -> Fact[Any]:
        item = self.data.get(name)
        if not isinstance(item, dict):
            raise VgpuDataError(f"{self.key}: {name}: expected value and source")
        value = item.get("value", item.get("group", item.get("supported")))
        if value == UNKNOWN:
            return Fact(None, self.sources.get(item.get("source", "")))
        if kind is int:
            value = _int(value, f"{self.key}: {name}")
        elif not isinstance(value, kind):
            raise VgpuDataError(f"{self.key}: {name}: expected {kind.__name__} or 'unknown'")
        return Fact(value, self.source(item, name))

    def type_facts(self, item: Any) -> TypeFacts:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise VgpuDataError(f"{self.key}: a type without a name")
        name = item["name"]
        where = f"{self.key}: {name}"
        mixed = item.get("max_per_gpu_mixed", UNKNOWN)
        fb = _int(item.get("frame_buffer_mb", UNKNOWN), where)
        return TypeFacts(
            name=name,
            series=str(item.get("series", "")).upper(),
            frame_buffer_mb=fb,
            max_per_gpu=_int(item.get("max_per_gpu"), where),
            max_per_gpu_mixed=None if mixed == NOT_ALLOWED else _int(mixed, where),
            mixed_allowed=False if mixed == NOT_ALLOWED else (None if mixed == UNKNOWN else True),
            placement_size=_int(item.get("placement_size", UNKNOWN), where),
            placement_ids=_ints(item.get("placement_ids", UNKNOWN), where),
            source=self.source(item, name),
        )

    def mig(self) -> MigFacts | None:
        raw = self.data.get("mig")
        if raw is None:
            return None
        if not isinstance(raw, dict):
            raise VgpuDataError(f"{self.key}: mig: expected a mapping")
        profiles = []
        for item in raw.get("profiles") or []:
            where = f"{self.key}: mig {item.get('mig') if isinstance(item, dict) else item}"
            if not isinstance(item, dict) or not isinstance(item.get("mig"), str):
                raise VgpuDataError(f"{where}: a MIG profile without a name")
            vgpu = item.get("vgpu")
            compute = _int(item.get("compute"), where)
            maximum = _int(item.get("max_per_gpu"), where)
            if compute is None or maximum is None:
                raise VgpuDataError(f"{where}: compute slices and max_per_gpu needed")
            profiles.append(
                MigTypeFacts(
                    mig=item["mig"],
                    vgpu=vgpu if isinstance(vgpu, str) and vgpu != UNKNOWN else None,
                    frame_buffer_mb=_int(item.get("frame_buffer_mb", UNKNOWN), where),
                    compute=compute,
                    span=_int(item.get("memory_slices", UNKNOWN), where),
                    maximum=maximum,
                    starts=_ints(item.get("placements", UNKNOWN), where),
                    media=bool(item.get("media", False)),
                    source=self.source(item, where),
                )
            )
        compute = _int(raw.get("compute_slices", UNKNOWN), f"{self.key}: mig")
        slices = _int(raw.get("memory_slices", UNKNOWN), f"{self.key}: mig")
        return MigFacts(compute, slices, tuple(profiles), self.source(raw, "mig"))

    def board(self) -> BoardFacts:
        d = self.data
        for name in ("board", "name", "architecture"):
            if not isinstance(d.get(name), str):
                raise VgpuDataError(f"{self.key}: no {name}")
        fb = _int(d.get("frame_buffer_mb", UNKNOWN), f"{self.key}: frame_buffer_mb")
        types = [self.type_facts(t) for t in d.get("types") or []]
        return BoardFacts(
            key=self.key,
            board=d["board"],
            name=d["name"],
            device_ids=_ints(d.get("pci_device_ids"), f"{self.key}: pci_device_ids") or (),
            subsystems=tuple((int(a), int(b)) for a, b in (d.get("pci_subsystems") or [])),
            frame_buffer_mb=fb,
            gpus_per_board=_int(d.get("gpus_per_board", 1), self.key) or 1,
            architecture=d["architecture"],
            branches=_ints(d.get("branches", []), f"{self.key}: branches") or (),
            mixed_size=self.fact("mixed_size", bool),
            mmio_c_series_gb=self.fact("mmio_c_series_gb", int),
            bar1_mb=self.fact("bar1_mb", int),
            live_migration=self.fact("live_migration", str),
            nvlink=self.fact("nvlink", bool),
            types={t.key: t for t in types},
            mig=self.mig(),
            sources=dict(self.sources),
            nvlink_fabric=self.fabric(),
        )

    def fabric(self) -> Fact[str]:
        """The NVLink fabric the nvlink row names (``fabric``), with its own source
        (``fabric_source``); unknown where the row names none."""
        item = self.data.get("nvlink")
        if not isinstance(item, dict) or item.get("fabric", UNKNOWN) == UNKNOWN:
            return Fact(None)
        value = item["fabric"]
        if value not in FABRICS:
            known = ", ".join(FABRICS)
            raise VgpuDataError(f"{self.key}: nvlink: fabric {value!r} is not {known} or 'unknown'")
        name = item.get("fabric_source")
        if name not in self.sources:
            raise VgpuDataError(f"{self.key}: nvlink: a fabric without a source the file lists")
        return Fact(value, self.sources[name])


def parse_board(key: str, text: str) -> BoardFacts:
    """One board file's text; raises VgpuDataError on a figure without a source."""
    # libyaml's parser where PyYAML has it (the same safe constructors): the pure-Python
    # one took 0.6 s of every scan for these files, libyaml 0.09 s.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return _Reader(key, yaml.load(text, Loader=loader)).board()


@cache
def boards() -> tuple[BoardFacts, ...]:
    """Every board file shipped in the package, by file name."""
    folder = resources.files("gpuaudit.knowledge").joinpath(DATA)
    found = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".yaml"):
            found.append(parse_board(entry.name.removesuffix(".yaml"), entry.read_text("utf-8")))
    return tuple(found)


def _index(items: Iterable[BoardFacts]) -> dict[tuple[int, int, int, int], BoardFacts]:
    """(vendor, device, sub vendor, sub device) -> board; -1, -1 where the device id alone
    tells the board, that is where no other board file has it."""
    out: dict[tuple[int, int, int, int], BoardFacts] = {}
    owners: dict[int, set[str]] = {}
    boards = list(items)
    for b in boards:
        for device in b.device_ids:
            owners.setdefault(device, set()).add(b.key)
            for sub in b.subsystems:
                out[(catalog.NVIDIA, device, *sub)] = b
    for b in boards:
        for device in b.device_ids:
            if owners[device] == {b.key}:
                out[(catalog.NVIDIA, device, -1, -1)] = b
    return out


@lru_cache(maxsize=256)
def board_for(
    vendor_id: int, device_id: int, sub_vendor_id: int = 0, sub_device_id: int = 0
) -> BoardFacts | None:
    """The board file of a PCI device: by subsystem where its device id names several
    boards (25b6: A2 and A16), else by device id alone; None when no file has it."""
    index = _index(boards())
    key = (catalog.unsigned16(vendor_id), catalog.unsigned16(device_id))
    sub = (catalog.unsigned16(sub_vendor_id), catalog.unsigned16(sub_device_id))
    return index.get((*key, *sub)) or index.get((*key, -1, -1))


def board_of_model(model: catalog.GpuModel) -> BoardFacts | None:
    """The board file of a catalogue model, by the PCI ids the catalogue knows it by."""
    for (vendor, device, sub_vendor, sub_device), board in catalog.BY_SUBSYSTEM.items():
        if board is model:
            return board_for(vendor, device, sub_vendor, sub_device)
    for (vendor, device), known in catalog.MODELS.items():
        if known is model:
            return board_for(vendor, device)
    return None


# What docs/vgpu-types.md shows of the data (scripts/vgpu-types-doc writes it).
BEGIN = "<!-- coverage: begin (scripts/vgpu-types-doc) -->"
END = "<!-- coverage: end -->"


def _share(known: int, total: int) -> str:
    return "–" if not total else "all" if known == total else f"{known} of {total}"


def coverage_markdown(items: Iterable[BoardFacts]) -> str:
    """One row per board: what NVIDIA's published figures give, and what they leave out."""
    lines = [
        "| board | file | vGPU releases | types | maximum per GPU | mixed-size placements "
        "| MIG profiles | MIG start slices | C-series MMIO |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for b in sorted(items, key=lambda b: b.name.lower()):
        types = list(b.types.values())
        mixed = b.mixed_size.value
        placements = (
            "no mixed-size mode"
            if mixed is False
            else _share(sum(1 for t in types if t.placement_ids is not None), len(types))
        )
        migs = list(b.mig.profiles) if b.mig is not None else []
        starts = _share(sum(1 for m in migs if m.starts is not None), len(migs))
        mmio = f"{b.mmio_c_series_gb.value} GB" if b.mmio_c_series_gb.known else "unknown"
        releases = ", ".join(str(n) for n in b.branches) or "–"
        lines.append(
            f"| {b.name} | `{b.key}.yaml` | {releases} | {len(types)} "
            f"| {_share(sum(1 for t in types if t.max_per_gpu is not None), len(types))} "
            f"| {placements} | {len(migs) or '–'} | {starts} | {mmio} |"
        )
    return "\n".join(lines) + "\n"


def with_coverage(document: str) -> str:
    """``document`` with the text between the coverage markers replaced by the table."""
    start, end = document.find(BEGIN), document.find(END)
    if start < 0 or end < start:
        raise ValueError(f"the document has no coverage markers ({BEGIN} ... {END})")
    return f"{document[: start + len(BEGIN)]}\n\n{coverage_markdown(boards())}\n{document[end:]}"
