"""Headroom under N+1 on a hand-built cluster, and its JSON, workbook and HTML forms.

Three hosts, one L4 each in equal-size mode, each offering grid_l4-8q: NVIDIA's vGPU user
guide (A.1, "Virtual GPU Types for NVIDIA L4") allows 3 L4-8Q per GPU, so the cluster
holds 9. Three run (two on esx1, one on esx2): 6 more fit now. A host failure displaces
at most 3 VMs onto the 6 slots of the two survivors, so with T VMs in all the loss of a
host holding m of them needs 6 - (T - m) >= m, that is T <= 6: 3 more VMs under N+1.
"""

from __future__ import annotations

import json

import pytest

from gpuaudit.check import run_checks
from gpuaudit.facts import Facts
from gpuaudit.inventory import Inventory, ProfileCapacity
from gpuaudit.plan.headroom import headroom_all
from gpuaudit.report.json_report import from_json_data, render_json, report_schema
from gpuaudit.report.workbook import audit_tables
from gpuaudit.results import AuditResult
from tests.builders import Estate
from tests.test_maintenance_scenario import checkout_section

PROFILE = "grid_l4-8q"


def estate(remaining: tuple[int, ...] | None = None) -> Inventory:
    e = Estate()
    e.cluster("hr")
    hosts = [e.host(f"esx{i}", "hr", profiles=(PROFILE,)) for i in (1, 2, 3)]
    for h in hosts:
        h.memory_mb = 512 * 1024
    gpus = [e.gpu(h, vgpu_mode="sameSize") for h in hosts]
    e.datastore("san", hosts)
    for name, i in (("a", 0), ("b", 0), ("c", 1)):
        e.vm(name, hosts[i], ["san"], vgpu=PROFILE, gpu=gpus[i])
    if remaining is not None:
        for h, left in zip(hosts, remaining, strict=True):
            h.vgpu_profiles[0].capacity = ProfileCapacity(3, 3 - left, left, 0)
    return e.inv


def rows(inv: Inventory) -> list[tuple[str, str, int, int, int | None, bool]]:
    out = []
    for c in headroom_all(Facts(inv)):
        for r in c.rows:
            out.append(
                (
                    r.gpu_model,
                    r.profile,
                    r.fits_now,
                    r.fits_nk,
                    r.vcenter_remaining,
                    r.below_vcenter,
                )
            )
    return out


def test_three_more_fit_under_n_plus_1() -> None:
    assert rows(estate()) == [("NVIDIA L4", PROFILE, 6, 3, None, False)]


def test_vcenters_remaining_is_beside_it_and_the_reserve_is_flagged() -> None:
    # vCenter: 1, 2 and 3 more on esx1, esx2, esx3 (its own count of the free slots).
    assert rows(estate((1, 2, 3))) == [("NVIDIA L4", PROFILE, 6, 3, 6, True)]


def test_vcenters_remaining_bounds_what_fits_now_and_restarts() -> None:
    # vCenter says esx3 takes none: 3 fit now (1 on esx1, 2 on esx2). Now the loss of
    # esx1 (2 VMs) restarts on esx2 (2 more) and that of esx2 (1) on esx1 (1 more). The
    # first new VM goes to esx2, whose memory is freer than esx1's (esx3 takes none):
    # esx2 then takes 1 more, and the loss of esx1 leaves one of its 2 VMs unrestarted.
    assert rows(estate((1, 2, 0))) == [("NVIDIA L4", PROFILE, 3, 0, 3, True)]


def test_memory_bounds_it() -> None:
    inv = estate()
    # esx3: 52,657 MB less 2,048 MB and 1% (527) for ESXi leaves 50,082 MB for VMs; a
    # 16,384 MB GPU VM reserves it all plus 256 MB and 1% (164) of overhead, 16,804 MB:
    # 2 fit, not 3. esx1 and esx2 have no memory size (not checked): 1 and 2 by the GPUs.
    for h in inv.hosts:
        h.memory_mb = 0 if h.name != "esx3" else 52_657
    (row,) = headroom_all(Facts(inv))[0].rows
    assert row.fits_now == 5
    assert row.vm_memory_mb == 16384


def test_a_cluster_short_of_n_plus_1_has_no_headroom_under_it() -> None:
    inv = estate()
    inv.clusters[0].ha_enabled = False
    (c,) = headroom_all(Facts(inv))
    assert (c.rows[0].fits_now, c.rows[0].fits_nk, c.tolerates_now) == (6, 0, False)
    assert c.notes == ["vSphere HA restarts nothing here: no new VM fits under N+k"]


@pytest.fixture
def result() -> AuditResult:
    inv = estate((1, 2, 3))
    checked = run_checks(inv)
    checked.headroom = headroom_all(Facts(inv))
    return checked


def test_the_json_report_carries_it_and_reads_it_back(result: AuditResult) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    doc = render_json(result)
    jsonschema.validate(doc, report_schema())
    (c,) = doc["headroom"]
    assert (c["cluster"], c["k"], c["rows"][0]["fits_nk"]) == ("hr", 1, 3)
    assert from_json_data(json.loads(json.dumps(doc))).headroom == result.headroom


def test_the_workbook_has_a_headroom_sheet(result: AuditResult) -> None:
    sheet = next(t for t in audit_tables(result, 2) if t.title == "Headroom")
    assert [tuple(r) for r in sheet.rows] == [("hr", "NVIDIA L4", PROFILE, 16384, 6, 1, 3, 6, True)]


def test_the_html_report_has_a_headroom_section(
    result: AuditResult, monkeypatch: pytest.MonkeyPatch
) -> None:
    section = checkout_section(result, monkeypatch, "headroom")
    assert section.count('class="headroom-cluster"') == 1
    assert "held for failures: 3" in section
