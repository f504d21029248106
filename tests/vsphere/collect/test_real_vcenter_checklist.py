"""docs/real-vcenter-checklist.md lists every property path the collector reads.

The paths come from the collector's own lists (gpuaudit/vsphere/collect/paths.py's EVERY_PATH
and the managers' paths in gpuaudit/vsphere/collect/managers.py), so a path added to the
collector and not to the checklist fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

from gpuaudit.vsphere.collect.managers import LICENCE_PATHS, PERF_PATHS
from gpuaudit.vsphere.collect.paths import EVERY_PATH

ROOT = Path(__file__).resolve().parents[3]
CHECKLIST = ROOT / "docs" / "real-vcenter-checklist.md"
ROW = re.compile(r"^\| (\w+) \| `([^`]+)` \| (confirmed|inferred) \| (.+) \|$")
LINK = re.compile(r"\]\((\.\./tests/corpus/[^)]+\.yaml)\)")


def collector_paths() -> set[tuple[str, str]]:
    paths = {(t.__name__.rsplit(".", 1)[-1], p) for t, ps in EVERY_PATH.items() for p in ps}
    paths |= {("PerformanceManager", p) for p in PERF_PATHS}
    paths |= {("LicenseManager", p) for p in LICENCE_PATHS}
    return paths


def rows() -> list[tuple[str, str, str, str]]:
    text = CHECKLIST.read_text("utf-8")
    table = text.split("## Property paths", 1)[1].split("\n## ", 1)[0]
    found = []
    for line in table.splitlines():
        match = ROW.match(line)
        if match:
            kind, path, status, evidence = match.groups()
            found.append((kind, path, status, evidence))
    return found


def test_the_checklist_lists_every_path_the_collector_reads_once() -> None:
    listed = [(kind, path) for kind, path, _, _ in rows()]
    assert len(listed) == len(set(listed))
    assert set(listed) == collector_paths()


def test_the_collector_reads_the_gpu_paths_the_checklist_is_about() -> None:
    # Written out: a checklist that lost these rows with the collector would still agree.
    for row in (
        ("HostSystem", "hardware.pciDevice"),
        ("HostSystem", "config.graphicsInfo"),
        ("HostSystem", "config.sharedPassthruGpuTypes"),
        ("VirtualMachine", "config.hardware.device"),
        ("PerformanceManager", "perfCounter"),
    ):
        assert row in collector_paths()


def test_every_confirmed_row_links_a_corpus_sample_that_exists() -> None:
    confirmed = [(k, p, e) for k, p, s, e in rows() if s == "confirmed"]
    assert confirmed
    for kind, path, evidence in confirmed:
        links = LINK.findall(evidence)
        assert links, (kind, path)
        for link in links:
            assert (CHECKLIST.parent / link).resolve().is_file(), link


def test_every_corpus_link_in_the_checklist_exists() -> None:
    for link in LINK.findall(CHECKLIST.read_text("utf-8")):
        assert (CHECKLIST.parent / link).resolve().is_file(), link
