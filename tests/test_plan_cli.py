"""gpuaudit plan: the change file's validation (file:line, exit 2), the reports of the
after, and the worked examples of docs/plan.md, regenerated and compared with the page."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from gpuaudit import pipeline, scan
from gpuaudit.change_file import ChangeFileError, parse_changes
from gpuaudit.cli import main
from gpuaudit.pipeline import PlanOutcome
from gpuaudit.plan.whatif import AddHosts, SetHa
from gpuaudit.report.html import render_html
from gpuaudit.report.workbook import audit_tables
from tests.test_whatif import full_pair

ROOT = Path(__file__).resolve().parent.parent
PLAN_DOC = ROOT / "docs" / "plan.md"
EXAMPLE = re.compile(
    r"```console\n\$ gpuaudit plan --demo --change (?P<file>\S+)\n(?P<out>.*?)```", re.S
)


def run(*args: str) -> Result:
    return CliRunner().invoke(main, ["-q", *args])


def changes(tmp_path: Path, text: str) -> str:
    path = tmp_path / "changes.yaml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def examples() -> list[tuple[str, str]]:
    return [(m["file"], m["out"]) for m in EXAMPLE.finditer(PLAN_DOC.read_text("utf-8"))]


def test_the_page_has_the_three_worked_examples() -> None:
    assert [f for f, _ in examples()] == [
        "docs/examples/plan-add-host.yaml",
        "docs/examples/plan-retire-host.yaml",
        "docs/examples/plan-mixed-size.yaml",
    ]


@pytest.mark.parametrize(("file", "expected"), examples())
def test_each_worked_example_prints_what_the_page_shows(file: str, expected: str) -> None:
    result = run("plan", "--demo", "--change", str(ROOT / file))
    assert result.exit_code == 0, result.output
    assert result.stdout == expected


def test_the_file_reads_into_changes() -> None:
    read = parse_changes(
        "version: 1\nchanges:\n"
        "  - add_hosts: {cluster: c1, count: 2, profiles: [grid_l4-8q]}\n"
        "  - set_ha:\n      cluster: c1\n      options: {das.x: '1'}\n"
    )
    assert read.changes == [
        AddHosts("c1", count=2, profiles=("grid_l4-8q",)),
        SetHa("c1", options=(("das.x", "1"),)),
    ]
    assert read.lines[1]["options"] == 6


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "changes:\n  - add_hosts: {cluster: c1, colour: red}\n",
            ":2: changes[0].add_hosts: unknown key 'colour'",
        ),
        (
            "changes:\n  - move_vm: {vm: a, host: b}\n    set_profile: {vm: a, profile: p}\n",
            ":2: changes[0]: each change is exactly one of",
        ),
        (
            "changes:\n  - set_vgpu_mode: {cluster: c1, mode: huge}\n",
            ":2: changes[0].set_vgpu_mode.mode: expected one of sameSize, mixedSize",
        ),
        ("version: 2\nchanges:\n  - retire_hosts: {hosts: [h1]}\n", ":1: version: expected 1"),
        ("changes: []\n", ":1: changes: the list is empty"),
    ],
)
def test_mistakes_are_told_with_their_line(text: str, message: str) -> None:
    with pytest.raises(ChangeFileError) as err:
        parse_changes(text, "f.yaml")
    assert str(err.value).startswith("f.yaml" + message)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "version: 1\nchanges:\n  - set_ha: {cluster: vdi-vgpu, enabled: true}\n"
            "  - add_hosts:\n      cluster: nowhere\n",
            ":5: changes[1].add_hosts.cluster: no cluster 'nowhere'",
        ),
        (
            "changes:\n  - move_vm:\n      vm: cad-ws-01\n      host: esx-99\n",
            ":4: changes[0].move_vm.host: no host 'esx-99'",
        ),
        (
            "changes:\n  - retire_hosts:\n      hosts: [m10-*]\n",
            ":3: changes[0].retire_hosts.hosts: no host matches 'm10-*'",
        ),
    ],
)
def test_unknown_names_exit_2_with_the_files_line(tmp_path: Path, text: str, message: str) -> None:
    path = changes(tmp_path, text)
    result = run("plan", "--demo", "--change", path)
    assert result.exit_code == 2
    assert f"{path}{message}" in result.stderr


def test_a_change_file_is_required() -> None:
    result = run("plan", "--demo")
    assert result.exit_code == 2
    assert "--change" in result.stderr


def test_the_json_report_of_the_after_holds_the_comparison(tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    from gpuaudit.report.json_report import from_json_data, report_schema

    out = tmp_path / "out"
    file = str(ROOT / "docs" / "examples" / "plan-retire-host.yaml")
    result = run("plan", "--demo", "--change", file, "-o", str(out), "-f", "json")
    assert result.exit_code == 0, result.output
    (report,) = out.glob("*.json")
    doc = json.loads(report.read_text("utf-8"))
    jsonschema.validate(doc, report_schema())
    assert "ml-buffer-01.north.example" not in {h["name"] for h in doc["inventory"]["hosts"]}
    ml = next(c for c in doc["plan"]["clusters"] if c["cluster"] == "ml-iscsi")
    # The demo's ml-iscsi has three hosts, one of them the buffer retired.
    assert (ml["hosts_before"], ml["hosts_after"]) == (3, 2)
    assert ("HA-05", "train-01") in {(f["rule"], f["object"]) for f in doc["plan"]["appeared"]}
    plan = from_json_data(doc).plan
    assert plan is not None and plan.clusters[1].cluster == "ml-iscsi"


def test_the_stranded_capacity_in_the_reports_is_of_the_after(tmp_path: Path) -> None:
    out = tmp_path / "out"
    file = str(ROOT / "docs" / "examples" / "plan-mixed-size.yaml")
    result = run("plan", "--demo", "--change", file, "-o", str(out), "-f", "json")
    assert result.exit_code == 0, result.output
    (report,) = out.glob("*.json")
    doc = json.loads(report.read_text("utf-8"))
    # The example switches vdi-vgpu (three hosts of two L4s each, docs/plan.md) to
    # mixed-size mode: each of its six GPUs is judged by the mixed-size rule.
    (vdi,) = [c for c in doc["stranded"] if c["cluster"] == "vdi-vgpu"]
    assert [g["mode"] for g in vdi["gpus"]] == ["mixed"] * 6


@pytest.fixture(scope="module")
def planned(tmp_path_factory: pytest.TempPathFactory) -> PlanOutcome:
    """tests/test_whatif.py's full pair (two hosts whose L4s each run three L4-8Q VMs:
    N+0) with one more host like h1: N+1."""
    folder = tmp_path_factory.mktemp("plan")
    saved = folder / "inventory.json"
    full_pair().save(saved)
    file = folder / "changes.yaml"
    file.write_text("changes:\n  - add_hosts: {cluster: c1, like: h1}\n", encoding="utf-8")
    return pipeline.plan(scan.Saved(saved), str(file))


def test_the_workbook_has_the_plan_sheets(planned: PlanOutcome) -> None:
    sheets = {t.title: t for t in audit_tables(planned.after, 2)}
    rows = [tuple(r) for r in sheets["Plan"].rows]
    assert ("c1", "hosts", "2", "3") in rows
    assert ("c1", "N+k", "N+0", "N+1") in rows
    # Before, both L4s are full; after, the new one takes 3, none of them under N+1.
    assert ("c1", "headroom NVIDIA L4 grid_l4-8q", "0 / 0", "3 / 0") in rows
    gone = [tuple(r[:3]) for r in sheets["Plan Findings"].rows if r[0] == "goes"]
    assert ("goes", "HA-05", "v00") in gone


def test_the_html_report_has_the_what_if_section(planned: PlanOutcome) -> None:
    html = render_html(planned.after)
    section = html[html.index('<section id="plan">') :]
    section = section[: section.index("</section>")]
    assert '<a href="#plan">What-if</a>' in html
    assert "<td>N+k</td><td>N+0</td><td><strong>N+1</strong></td>" in section
    assert "add_hosts: cluster c1; count 1; like h1" in section


def test_a_scan_has_no_what_if_section(planned: PlanOutcome) -> None:
    assert 'id="plan"' not in render_html(planned.before)
    assert "Plan" not in {t.title for t in audit_tables(planned.before, 2)}


def test_the_pages_reference_file_reads() -> None:
    text = PLAN_DOC.read_text("utf-8")
    section = text[text.index("### The change file") :]
    block = section[section.index("```yaml\n") + 8 : section.index("```\n", 8)]
    assert parse_changes(block).kinds == [
        "add_hosts",
        "retire_hosts",
        "move_vm",
        "set_profile",
        "set_vgpu_mode",
        "add_drs_rule",
        "add_drs_rule",
        "set_ha",
        "set_drs",
    ]
