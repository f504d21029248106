"""gpuaudit plan: the change file's validation (file:line, exit 2), the reports of the
after, and the worked examples of docs/plan.md, regenerated and compared with the page."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from gpuaudit.cli.main import main
from gpuaudit.jobs import scan as pipeline
from gpuaudit.jobs.scan import PlanOutcome
from gpuaudit.plan.change_file import ChangeFileError, parse_changes
from gpuaudit.plan.whatif import AddHosts, SetHa
from gpuaudit.report.html import render_html
from gpuaudit.report.workbook import audit_tables
from gpuaudit.vsphere import obtain
from tests.plan.test_whatif import full_pair
from tests.support.builders import Estate

ROOT = Path(__file__).resolve().parents[2]
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
    """tests/plan/test_whatif.py's full pair (two hosts whose L4s each run three L4-8Q VMs:
    N+0) with one more host like h1: N+1."""
    folder = tmp_path_factory.mktemp("plan")
    saved = folder / "inventory.json"
    full_pair().save(saved)
    file = folder / "changes.yaml"
    file.write_text("changes:\n  - add_hosts: {cluster: c1, like: h1}\n", encoding="utf-8")
    return pipeline.plan(obtain.Saved(saved), str(file))


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


# --fail-on: the after judged against the before, as a scan against a baseline.

RETIRE = str(ROOT / "docs" / "examples" / "plan-retire-host.yaml")
ADD_HOST = str(ROOT / "docs" / "examples" / "plan-add-host.yaml")


def verdict(output: str) -> list[str]:
    """The verdict and the findings that count: what follows the comparison (and
    precedes the reports written, as a scan's verdict does)."""
    lines = output.split("\n\n")[-1].splitlines()
    return [line for line in lines if not line.startswith("wrote ")]


def test_without_fail_on_a_plan_exits_0_whatever_it_shows() -> None:
    # The retirement makes HA-05 fail for train-01 (docs/plan.md), at high.
    result = run("plan", "--demo", "--change", RETIRE)
    assert result.exit_code == 0, result.output
    assert "FAIL" not in result.stdout and "PASS" not in result.stdout


def test_fail_on_counts_what_the_changes_introduce_or_make_worse(tmp_path: Path) -> None:
    # The demo's ml-iscsi: ml-gpu-01 runs train-01 (Dynamic DirectPath), ml-gpu-02 runs
    # train-02 (fixed DirectPath), and ml-buffer-01 holds a free L40S, the buffer of
    # reference design C. Before: train-01 restarts on the buffer (HA-05 passes);
    # train-02 can never restart, and the cluster is N+0, both failures kept at medium
    # while design C is observed. After retiring the buffer: train-01 fails, and with
    # the buffer gone the design is no longer C, so train-02's failure and the
    # cluster's N+0 are high. The demo's vdi-vgpu fails HA-05 for cad-ws-04 at high
    # before and after (docs/plan.md, "Add a host"): the change does not make it worse.
    out = tmp_path / "out"
    result = run(
        "plan", "--demo", "--change", RETIRE, "--fail-on", "high", "-o", str(out), "-f", "json"
    )
    assert result.exit_code == 1, result.output
    assert verdict(result.stdout) == [
        "FAIL: findings the changes introduce or make worse at or above high",
        "  HA-05 train-01 (high, fail)",
        "  HA-05 train-02 (high, fail)",
        "  HA-08 ml-iscsi (high, fail)",
    ]
    (report,) = out.glob("*.json")
    doc = json.loads(report.read_text("utf-8"))
    jsonschema = pytest.importorskip("jsonschema")
    from gpuaudit.report.json_report import report_schema

    jsonschema.validate(doc, report_schema())
    assert doc["summary"]["verdict"] == "fail"
    states = {(f["rule"], f["object"]): f.get("baseline_state") for f in doc["findings"]}
    assert states[("HA-05", "train-01")] == "new"
    assert states[("HA-05", "cad-ws-04")] == "unchanged"


def test_fail_on_alone_is_scans_default_high() -> None:
    # The three high findings of the retirement (above) count at high.
    result = run("plan", "--demo", "--fail-on", "--change", RETIRE)
    assert result.exit_code == 1, result.output
    assert verdict(result.stdout)[0] == (
        "FAIL: findings the changes introduce or make worse at or above high"
    )


def test_fail_on_above_what_the_changes_introduce_exits_0() -> None:
    # The demo has no critical finding, and so neither does the retirement.
    result = run("plan", "--demo", "--change", RETIRE, "--fail-on", "critical")
    assert result.exit_code == 0, result.output
    assert verdict(result.stdout) == [
        "PASS: nothing the changes introduce or make worse at or above critical"
    ]


def test_a_change_to_a_failing_estate_passes_if_it_adds_no_failure_at_the_threshold() -> None:
    # Adding vdi-esx-04 (docs/plan.md, "Add a host") leaves vdi-vgpu's high failures as
    # they were and brings only GPU-04 (info: its two idle L4s) and MON-01 (medium: the
    # new host was not queried for counters).
    high = run("plan", "--demo", "--change", ADD_HOST, "--fail-on", "high")
    assert high.exit_code == 0, high.output
    medium = run("plan", "--demo", "--change", ADD_HOST, "--fail-on", "medium")
    assert medium.exit_code == 1, medium.output
    assert verdict(medium.stdout)[1:] == ["  MON-01 vdi-esx-04.north.example (medium, fail)"]
    never = run("plan", "--demo", "--change", ADD_HOST, "--fail-on", "never")
    assert never.exit_code == 0, never.output
    assert verdict(never.stdout) == ["PASS: report only (--fail-on never)"]


def test_a_restart_the_changes_leave_not_proven_fails_the_gate(tmp_path: Path) -> None:
    # h1's L4 runs three L4-8Q (NVIDIA allows 3 per GPU: full); h2's L4 is idle, where
    # they restart if h1 fails: HA-05 passes. The change retires h2 and adds a host whose
    # one GPU is an "Acme Z9", a board no catalogue knows: whether it takes an L4-8Q is
    # not known, so the three restarts are not proven (high), and --fail-on high counts
    # them: NOT PROVEN, exit 1.
    e = Estate()
    e.cluster("c1")
    hosts = [e.host(f"h{i}", "c1", profiles=("grid_l4-8q",)) for i in (1, 2)]
    for h in hosts:
        e.gpu(h, vgpu_mode="sameSize")
    e.datastore("san", hosts)
    for j in range(3):
        e.vm(f"v{j}", hosts[0], ["san"], vgpu="grid_l4-8q")
    saved = tmp_path / "inventory.json"
    e.inv.save(saved)
    file = changes(
        tmp_path,
        "changes:\n  - retire_hosts: {hosts: [h2]}\n"
        "  - add_hosts: {cluster: c1, gpu_model: Acme Z9, gpus: 1, profiles: [grid_l4-8q]}\n",
    )
    result = run("plan", "--from", str(saved), "--change", file, "--fail-on", "high")
    assert result.exit_code == 1, result.output
    lines = verdict(result.stdout)
    assert lines[0] == (
        "NOT PROVEN: findings the changes introduce or make worse at or above high "
        "rest on facts not known exactly"
    )
    assert {f"  HA-05 v{j} (high, not proven)" for j in range(3)} <= set(lines[1:])
    assert not [line for line in lines[1:] if line.endswith(", fail)")]


# -o -: the one report of the after on standard output, as scan has it.


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_dash_output_writes_the_report_of_the_after_to_stdout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    monkeypatch.chdir(tmp_path)
    result = run("plan", "--demo", "--change", RETIRE, "-o", "-", "-f", fmt)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)  # nothing else on standard output
    if fmt == "json":
        # The demo's ml-iscsi has three hosts, one of them the buffer retired.
        ml = next(c for c in doc["plan"]["clusters"] if c["cluster"] == "ml-iscsi")
        assert (ml["hosts_before"], ml["hosts_after"]) == (3, 2)
    else:
        assert doc["runs"][0]["tool"]["driver"]["name"] == "gpuaudit"
    assert result.stderr.startswith("Changes\n  1. retire_hosts")  # the comparison moves
    assert list(tmp_path.iterdir()) == []  # no folder named "-", no file


def test_dash_output_keeps_the_verdict_off_stdout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = run("plan", "--demo", "--change", RETIRE, "-o", "-", "-f", "json", "--fail-on", "high")
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    assert doc["summary"]["verdict"] == "fail"
    assert verdict(result.stderr)[0].startswith("FAIL: findings the changes introduce")


def test_a_plan_on_an_estate_with_no_host_read_fails_whatever_fail_on(tmp_path: Path) -> None:
    # A cluster and no host: DATA-02 fails before and after (nothing was examined), so the
    # gate fails even at --fail-on never, as a scan does; without --fail-on, exit 0.
    e = Estate()
    e.cluster("c1")
    saved = tmp_path / "inventory.json"
    e.inv.save(saved)
    file = changes(tmp_path, "changes:\n  - set_ha: {cluster: c1, enabled: true}\n")
    result = run("plan", "--from", str(saved), "--change", file, "--fail-on", "never")
    assert result.exit_code == 1, result.output
    assert verdict(result.stdout) == ["FAIL: nothing was examined (DATA-02)"]
    assert run("plan", "--from", str(saved), "--change", file).exit_code == 0
