"""The nightly job: retention, the latest names, and the documented cron and systemd jobs."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from click.testing import CliRunner

from gpuaudit.cli.main import main
from gpuaudit.jobs import retention
from gpuaudit.report.naming import safe_server
from gpuaudit.vsphere.connect import parse_server
from tests.conftest import require_tool
from tests.jobs.test_notify import Mailbox, Received, start_smtp, start_webhook
from tests.support.postgres_server import PostgresServer, serve_postgres

ROOT = Path(__file__).resolve().parents[2]
SCHEDULING = ROOT / "docs" / "scheduling.md"
GPUAUDIT = Path(sys.executable).parent / "gpuaudit"


def touch(folder: Path, *names: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).write_text(name, encoding="utf-8")


def test_prune_keeps_the_newest_sets_of_that_server_and_nothing_else(tmp_path: Path) -> None:
    old = ["gpuaudit-vc01-20261101T020000Z.html", "gpuaudit-vc01-20261101T020000Z.json"]
    same_second = ["gpuaudit-vc01-20261102T020000Z.json", "gpuaudit-vc01-20261102T020000Z-1.json"]
    newest = ["gpuaudit-vc01-20261103T020000Z.html", "gpuaudit-vc01-20261103T020000Z.junit.xml"]
    survivors = [
        "gpuaudit-vc02-20261001T020000Z.html",  # another server
        "gpuaudit-vc01.example.com-20261001T020000Z.json",  # another server again
        "gpuaudit-vc01-20261001T020000Z.json.bak",  # looks alike
        "gpuaudit-vc01-20261001T020000Z.txt",  # not an extension of ours
        "gpuaudit-vc01-2026-10-01.json",  # not a stamp
        "notes.md",
        "inventory-vc01-20261001T020000Z.json",
        "gpuaudit-fleet-20261001T020000Z.json",
    ]
    touch(tmp_path, *old, *same_second, *newest, *survivors)
    (tmp_path / "gpuaudit-vc01-20261001T020000Z.sarif").mkdir()  # a folder, not a report
    removed = retention.prune(tmp_path, "vc01", keep=2)
    assert sorted(p.name for p in removed) == sorted([*old, "gpuaudit-vc01-20261102T020000Z.json"])
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted(
        [
            *survivors,
            "gpuaudit-vc01-20261102T020000Z-1.json",
            *newest,
            "gpuaudit-vc01-20261001T020000Z.sarif",
        ]
    )


def test_prune_never_follows_or_removes_a_symlink(tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text("keep me", encoding="utf-8")
    reports = tmp_path / "reports"
    touch(reports, "gpuaudit-vc01-20261103T020000Z.json")
    (reports / "gpuaudit-vc01-20261101T020000Z.json").symlink_to(outside)
    assert retention.prune(reports, "vc01", keep=1) == []
    assert outside.read_text(encoding="utf-8") == "keep me"


def test_link_latest_falls_back_to_a_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    touch(tmp_path, "gpuaudit-vc01-20261103T020000Z.junit.xml")
    report = tmp_path / "gpuaudit-vc01-20261103T020000Z.junit.xml"

    def refuse(self: Path, target: Any, target_is_directory: bool = False) -> None:
        raise OSError(1, "Operation not permitted")

    monkeypatch.setattr(Path, "symlink_to", refuse)
    (link,) = retention.link_latest([report], "vc01")
    assert link.name == "gpuaudit-vc01-latest.junit.xml"
    assert not link.is_symlink() and link.read_bytes() == report.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([report.name, link.name])


def night_after_night(folder: Path, nights: int, formats: tuple[str, ...]) -> None:
    """One process's runs: write a report set, then keep 1 and point the latest names
    at it, as `scan --keep 1 --latest` does; exit 1 if a latest link ever dangles."""
    from datetime import UTC

    from gpuaudit.common.files import write_new
    from gpuaudit.report.naming import report_stem

    dangling = 0
    for night in range(nights):
        stem = report_stem("vc01", datetime.now(UTC))
        with retention.locked(folder, "vc01"):
            reports = write_new(folder, stem, [(f, f"night {night}".encode()) for f in formats])
            retention.tidy(reports, folder, "vc01", keep=1, latest=True)
        links = [folder / f"gpuaudit-vc01-latest{f}" for f in (".html", ".json")]
        dangling += sum(p.is_symlink() and not p.exists() for p in links)  # exists() follows it
    os._exit(1 if dangling else 0)


def test_concurrent_runs_with_keep_1_and_latest_never_leave_a_link_dangling(
    tmp_path: Path,
) -> None:
    """Four processes at once, one writing JSON only: a link re-pointed by one run at
    its set is never left at a set another run pruned."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    runs = [(".html", ".json")] * 3 + [(".json",)]
    workers = [
        context.Process(target=night_after_night, args=(tmp_path, 40, formats)) for formats in runs
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=300)
    assert [w.exitcode for w in workers] == [0, 0, 0, 0], "a latest link dangled during the runs"
    links = sorted(p for p in tmp_path.iterdir() if p.name.startswith("gpuaudit-vc01-latest."))
    assert [p.name for p in links] == ["gpuaudit-vc01-latest.html", "gpuaudit-vc01-latest.json"]
    assert all(p.is_symlink() and p.exists() for p in links)
    sets = retention.report_sets(tmp_path, "vc01")
    linked = {p.resolve() for p in links}
    # What stays: the newest set and the sets a link points to, nothing else.
    assert all(s is sets[-1] or linked & {p.resolve() for p in s} for s in sets)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_prune_keeps_a_set_a_latest_link_points_to(tmp_path: Path) -> None:
    old = ["gpuaudit-vc01-20261101T020000Z.html", "gpuaudit-vc01-20261101T020000Z.json"]
    middle = ["gpuaudit-vc01-20261102T020000Z.html", "gpuaudit-vc01-20261102T020000Z.json"]
    newest = ["gpuaudit-vc01-20261103T020000Z.json"]
    touch(tmp_path, *old, *middle, *newest)
    (tmp_path / "gpuaudit-vc01-latest.html").symlink_to(old[0])
    (tmp_path / "gpuaudit-vc01-latest.json").symlink_to(newest[0])
    (tmp_path / "gpuaudit-vc02-latest.json").symlink_to(middle[1])  # another server's
    removed = retention.prune(tmp_path, "vc01", keep=1)
    assert sorted(p.name for p in removed) == middle
    assert (tmp_path / "gpuaudit-vc01-latest.html").exists()
    assert retention.linked_sets(tmp_path, "vc01") == {
        ("20261101T020000Z", 0),
        ("20261103T020000Z", 0),
    }
    (tmp_path / "gpuaudit-vc01-latest.html").unlink()
    (tmp_path / "gpuaudit-vc01-latest.html").symlink_to("gpuaudit-vc01-20261103T020000Z.json")
    assert sorted(p.name for p in retention.prune(tmp_path, "vc01", keep=1)) == old


def test_tidy_waits_for_the_lock_of_another_run(tmp_path: Path) -> None:
    import threading

    touch(tmp_path, "gpuaudit-vc01-20261103T020000Z.json")
    report = tmp_path / "gpuaudit-vc01-20261103T020000Z.json"
    done = threading.Event()
    with retention.locked(tmp_path, "vc01"):

        def run() -> None:
            with retention.locked(tmp_path, "vc01"):
                retention.tidy([report], tmp_path, "vc01", 1, True)
            done.set()

        worker = threading.Thread(target=run)
        worker.start()
        assert not done.wait(0.5)  # held off while the lock is held
        assert not (tmp_path / "gpuaudit-vc01-latest.json").exists()
    assert done.wait(10)
    worker.join()
    assert (tmp_path / "gpuaudit-vc01-latest.json").resolve() == report.resolve()
    assert retention.tidy([report], tmp_path, "vc01", None, False) == ([], [])


def scan_demo(out: Path, *args: str) -> None:
    result = CliRunner().invoke(
        main, ["scan", "--demo", "-q", "-f", "html,json", "-o", str(out), *args]
    )
    assert result.exit_code == 1, result.output


def test_keep_and_latest_on_the_command_line(tmp_path: Path) -> None:
    touch(tmp_path, "gpuaudit-demo-20200101T000000Z.json", "gpuaudit-other-20200101T000000Z.json")
    for _ in range(3):
        scan_demo(tmp_path, "--keep", "2", "--latest")
    sets = retention.report_sets(tmp_path, "demo")
    assert len(sets) == 2 and all(len(s) == 2 for s in sets)
    assert (tmp_path / "gpuaudit-other-20200101T000000Z.json").exists()
    newest = {p.suffix: p for p in sets[-1]}
    for extension in ("html", "json"):
        link = tmp_path / f"gpuaudit-demo-latest.{extension}"
        assert link.is_symlink() and link.resolve() == newest[f".{extension}"].resolve()


def test_keep_needs_a_folder_and_at_least_one() -> None:
    runner = CliRunner()
    zero = runner.invoke(main, ["scan", "--demo", "--keep", "0"])
    assert zero.exit_code == 2 and "--keep" in zero.output
    stream = runner.invoke(main, ["scan", "--demo", "-o", "-", "-f", "json", "--keep", "3"])
    assert stream.exit_code == 2 and "--keep needs an --output-dir" in stream.output


# -- the documented jobs ------------------------------------------------------


def fenced(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)


def cron_line() -> str:
    (block,) = fenced(SCHEDULING.read_text(encoding="utf-8"), "cron")
    lines = [line for line in block.splitlines() if line and not line.startswith("#")]
    assert len(lines) == 1, "cron takes one command per line"
    return lines[0]


def test_the_cron_job_is_one_line_that_cron_reads() -> None:
    line = cron_line()
    assert not line.rstrip().endswith("\\") and "%" not in line
    minute, hour, day, month, weekday, user, command = line.split(None, 6)
    assert [minute, hour, day, month, weekday, user] == ["15", "2", "*", "*", "*", "audit"]
    assert shlex.split(command)[0] == "/srv/gpuaudit/.venv/bin/gpuaudit"
    # The options are in the configuration file: the line stays short.
    assert shlex.split(command)[1:] == ["--config", "/etc/gpuaudit/gpuaudit.toml", "scan"]
    # The README shows the same line.
    assert line in (ROOT / "README.md").read_text(encoding="utf-8")


def unit_files() -> dict[str, str]:
    units = {}
    for block in fenced(SCHEDULING.read_text(encoding="utf-8"), "ini"):
        first = block.splitlines()[0]
        units[first.removeprefix("# /etc/systemd/system/")] = block
    assert set(units) == {"gpuaudit.service", "gpuaudit.timer"}
    return units


def exec_start() -> str:
    (line,) = [
        s for s in unit_files()["gpuaudit.service"].splitlines() if s.startswith("ExecStart=")
    ]
    return line.removeprefix("ExecStart=")


def job_config() -> str:
    """The documented configuration file."""
    (block,) = fenced(SCHEDULING.read_text(encoding="utf-8"), "toml")
    assert block.startswith("# /etc/gpuaudit/gpuaudit.toml\n")
    return block


def in_lab(command: str, lab: Any, root: Path, mail_port: int, config: str | None = None) -> str:
    """The documented command and configuration file with the lab, a folder of this test
    and a local mail server; the file is written where the command reads it."""
    config = job_config() if config is None else config
    for documented, here in (
        ("/srv/gpuaudit/.venv/bin/gpuaudit", str(GPUAUDIT)),
        ("vcenter.example.com", lab.url),
        ("audit@vsphere.local", lab.user),
        ("/etc/gpuaudit", str(root / "etc")),
        ("/srv/gpuaudit", str(root / "srv")),
        ("mail.example.com", f"127.0.0.1:{mail_port}"),
    ):
        assert documented in command + config
        command = command.replace(documented, here)
        config = config.replace(documented, here)
    (root / "etc").mkdir(parents=True, exist_ok=True)
    (root / "etc" / "gpuaudit.toml").write_text(config, encoding="utf-8")
    return command


def job_folders(root: Path, lab: Any) -> None:
    (root / "etc").mkdir(parents=True, exist_ok=True)
    (root / "srv" / "reports").mkdir(parents=True, exist_ok=True)
    (root / "etc" / "password").write_text(lab.password + "\n", encoding="utf-8")
    (root / "etc" / "password").chmod(0o600)
    (root / "etc" / "policy.yaml").write_text("version: 1\n", encoding="utf-8")
    if not (root / "etc" / "waivers.yaml").exists():
        (root / "etc" / "waivers.yaml").write_text("version: 1\n", encoding="utf-8")


def waive(root: Path, *pairs: tuple[str, str]) -> None:
    """The job's waiver file, waiving each (rule, object)."""
    waivers = "".join(
        f"  - rule: {rule}\n    object: {obj!r}\n    reason: accepted by design review\n"
        "    owner: gpu-ops\n    expires: 2099-12-31\n"
        for rule, obj in pairs
    )
    (root / "etc" / "waivers.yaml").write_text(f"version: 1\nwaivers:\n{waivers}", encoding="utf-8")


def first_failure(cassette: Path, out: Path) -> tuple[str, str]:
    """A failed finding of a scenario's recording, to waive on a night of that scenario."""
    done = CliRunner().invoke(
        main,
        ["-q", "scan", "--replay", str(cassette), "--no-history", "-f", "json", "-o", str(out)],
    )
    assert done.exit_code in (0, 1), done.output
    (report,) = out.glob("*.json")
    return min(failed_pairs(report))


@pytest.fixture
def mailbox() -> Iterator[tuple[Mailbox, int]]:
    box = Mailbox()
    controller, port = start_smtp(box)
    yield box, port
    controller.stop()


def source_tree() -> dict[str, str]:
    """PYTHONPATH, when the suite runs a source tree over an installed gpuaudit."""
    return {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}


def run_job(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    # cron runs the command with /bin/sh, in a bare environment.
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), **source_tree()}
    return subprocess.run(
        ["/bin/sh", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.mark.live
def test_the_documented_cron_job_runs_against_the_lab(
    lab_factory: Any, tmp_path: Path, mailbox: tuple[Mailbox, int]
) -> None:
    box, port = mailbox
    lab = lab_factory("scenario-b")
    job_folders(tmp_path, lab)
    command = in_lab(cron_line().split(None, 6)[6], lab, tmp_path, port)
    done = run_job(command, tmp_path)
    assert done.returncode == 0, done.stderr  # the first night: the baseline is created
    assert "baseline created: " in done.stdout
    assert (tmp_path / "srv" / "baseline.json").exists()
    assert len(box.messages) == 1


@pytest.mark.live
def test_the_systemd_units_verify_and_their_command_runs(
    lab_factory: Any, tmp_path: Path, mailbox: tuple[Mailbox, int]
) -> None:
    box, port = mailbox
    lab = lab_factory("scenario-b")
    job_folders(tmp_path, lab)
    command = in_lab(exec_start(), lab, tmp_path, port)
    # systemd runs ExecStart without a shell: split as it does, and run that.
    done = subprocess.run(
        shlex.split(command), cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env={"PATH": "/usr/bin:/bin", **source_tree()},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "baseline created: " in done.stdout and len(box.messages) == 1
    analyze = require_tool("systemd-analyze", "checks the documented unit files")
    units = unit_files()
    folder = tmp_path / "units"
    folder.mkdir()
    service = units["gpuaudit.service"].replace(exec_start(), command)
    service = service.replace("WorkingDirectory=/srv/gpuaudit", f"WorkingDirectory={tmp_path}")
    (folder / "gpuaudit.service").write_text(service, encoding="utf-8")
    (folder / "gpuaudit.timer").write_text(units["gpuaudit.timer"], encoding="utf-8")
    verify = subprocess.run(
        [analyze, "verify", "gpuaudit.service", "gpuaudit.timer"],
        cwd=folder, capture_output=True, text=True, timeout=120,
        env={**os.environ, "SYSTEMD_LOG_LEVEL": "warning"},
    )  # fmt: skip
    assert verify.returncode == 0, verify.stderr
    assert [line for line in verify.stderr.splitlines() if "gpuaudit" in line] == []


# -- three nights ---------------------------------------------------------------


def failed_pairs(report: Path, statuses: tuple[str, ...] = ("fail",)) -> set[tuple[str, str]]:
    """The findings of ``statuses``; an info finding is a notice, never a failure."""
    data = json.loads(report.read_text(encoding="utf-8"))
    return {
        (f["rule"], f["object"])
        for f in data["findings"]
        if f["status"] in statuses and f["severity"] != "info"
    }


def open_pairs(report: Path) -> set[tuple[str, str]]:
    """Failed or not proven: a baseline accepts both, and a finding that is now only
    not proven is not resolved."""
    return failed_pairs(report, ("fail", "unproven"))


def mildest_new(report: Path, baseline: set[tuple[str, str]]) -> tuple[str, str]:
    """The new failed finding (not open in ``baseline``) of lowest severity in ``report``:
    waived, it leaves the night failing on the others."""
    data = json.loads(report.read_text(encoding="utf-8"))
    ranks = {"low": 0, "medium": 1, "high": 2, "critical": 3}
    new = [
        (ranks[f["severity"]], f["rule"], f["object"])
        for f in data["findings"]
        if f["status"] == "fail"
        and f["severity"] in ranks
        and (f["rule"], f["object"]) not in baseline
    ]
    _rank, rule, obj = min(new)
    return rule, obj


def console_verdict(stdout: str) -> str | None:
    """The console's last line's verdict: PASS, FAIL or NOT PROVEN."""
    lines = [re.match(r"(PASS|FAIL|NOT PROVEN): ", line) for line in stdout.splitlines()]
    found = [m.group(1) for m in lines if m]
    return found[-1] if found else None


def console_number(stdout: str, prefix: str) -> int | None:
    for line in stdout.splitlines():
        if line.startswith(prefix):
            return int(line[len(prefix) :].split()[0])
    return None


postgres = pytest.fixture(scope="module", name="postgres")(serve_postgres)


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest) -> str | None:
    """The job's history: SQLite at its default place (None: no option), or a PostgreSQL URL."""
    if request.param == "sqlite":
        return None
    server: PostgresServer = request.getfixturevalue("postgres")
    return server.create_database("nightly")


def when(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


@pytest.mark.live
@pytest.mark.postgres
def test_three_nights_of_the_documented_job(
    lab_factory: Any, tmp_path: Path, mailbox: tuple[Mailbox, int], store: str | None
) -> None:
    """scenario-b, then the estate changes to scenario-a for two nights; --keep 2; the
    history in SQLite (the default) or PostgreSQL. The job is the documented cron line
    and configuration file, with a waiver file. Night 1 creates the baseline; on nights
    2 and 3 every output states the one verdict against it; night 3 waives one of
    night 2's new failures (newly waived since the last scan: neither new nor
    resolved); a fourth night cannot reach the vCenter and notifies both sinks."""
    box, mail_port = mailbox
    received = Received()
    # A waiver file waives one of scenario-b's failures: waived on night 1, and matching
    # nothing (a warning) on the scenario-a nights.
    waived = first_failure(ROOT / "cassettes" / "scenario-b.yaml", tmp_path / "replayed")
    (tmp_path / "etc").mkdir()
    waive(tmp_path, waived)
    hook_server, hook_url = start_webhook(received)
    try:
        port = 0
        nights = []
        accepted: tuple[str, str] | None = None
        for scenario in ("scenario-b", "scenario-a", "scenario-a"):
            lab = lab_factory(scenario, port=port)
            if len(nights) == 2:  # night 3 waives one of night 2's new failures
                name = safe_server(parse_server(lab.url).display)
                accepted = mildest_new(
                    tmp_path / "srv" / "reports" / f"gpuaudit-{name}-latest.json",
                    open_pairs(tmp_path / "srv" / "baseline.json"),
                )
                waive(tmp_path, waived, accepted)
            port = lab.port  # one server name, night after night
            job_folders(tmp_path, lab)
            config = job_config()
            assert "keep = 30\n" in config and 'notify = ["' in config
            config = config.replace("keep = 30\n", "keep = 2\n")
            config = config.replace('notify = ["', f'notify = ["{hook_url}/nightly?format=json", "')
            if store is not None:
                config += f"history = '{store}'\n"
            command = in_lab(cron_line().split(None, 6)[6], lab, tmp_path, mail_port, config)
            done = run_job(command, tmp_path)
            lab.stop()
            nights.append(done)
            assert done.returncode in (0, 1), done.stderr
        # A fourth night: the vCenter is down. The job fails, and both sinks hear it.
        unreachable = run_job(command, tmp_path)
    finally:
        hook_server.shutdown()
        hook_server.server_close()

    reports = tmp_path / "srv" / "reports"
    server = parse_server(lab.url).display
    sets = retention.report_sets(reports, server)
    assert len(sets) == 2  # the first night's set went
    assert all(sorted(p.suffix for p in s) == [".html", ".json", ".xml"] for s in sets)
    jsons = [next(p for p in s if p.suffix == ".json") for s in sets]
    latest = reports / f"gpuaudit-{safe_server(server)}-latest.json"
    assert latest.resolve() == jsons[-1].resolve()

    baseline = open_pairs(tmp_path / "srv" / "baseline.json")
    new = failed_pairs(jsons[0]) - baseline
    resolved = baseline - open_pairs(jsons[0])
    assert new and resolved  # the estate did change

    first, second, third = nights
    assert first.returncode == 0 and "baseline created: " in first.stdout
    assert waived in failed_pairs(tmp_path / "srv" / "baseline.json", ("waived",))
    assert waived not in baseline
    unmatched = f"warning: waiver {waived[0]} {waived[1]!r} (owner gpu-ops) matched no finding"
    assert unmatched not in first.stderr
    assert unmatched in second.stderr and unmatched in third.stderr
    assert second.returncode == 1  # scenario-a brings new high findings
    assert third.returncode == 1
    # Night 3's waived failure is no longer new, and not resolved either.
    assert accepted is not None and accepted in new
    for night, new_that_night in ((second, len(new)), (third, len(new) - 1)):
        assert console_number(night.stdout, "new findings: ") == new_that_night
        counts = re.search(
            r"^against the baseline: (\d+) new, \d+ unchanged, (\d+) resolved, \d+ waived$",
            night.stdout,
            re.M,
        )
        assert counts is not None, night.stdout
        assert (int(counts[1]), int(counts[2])) == (new_that_night, len(resolved))
    since = re.search(r"^since the last scan \(.*\): (.*)$", third.stdout, re.M)
    assert since is not None and since[1] == "0 new, 0 resolved, 1 newly waived failed findings"

    # Every output of every night states the one verdict: the exit status, the console,
    # the JSON, the HTML banner, JUnit (only a new finding fails), the mail, the
    # webhook and the history.
    verdicts = ["PASS", "FAIL", "FAIL"]
    assert [n.returncode for n in nights] == [0, 1, 1]
    assert [console_verdict(n.stdout) for n in nights] == verdicts
    documents = [tmp_path / "srv" / "baseline.json", *jsons]  # night 1's report is the baseline
    assert [
        json.loads(p.read_text(encoding="utf-8"))["summary"]["verdict"].upper() for p in documents
    ] == verdicts
    for night_set, new_that_night in zip(sets, (len(new), len(new) - 1), strict=True):
        html = next(p for p in night_set if p.suffix == ".html").read_text(encoding="utf-8")
        word = re.search(r'<div class="verdict-word">([^<]+)</div>', html)
        assert word is not None and word.group(1).strip() == "FAIL"
        junit = ElementTree.parse(next(p for p in night_set if p.suffix == ".xml")).getroot()
        failures = sum(int(s.get("failures") or 0) for s in junit.iter("testsuite"))
        assert failures == new_that_night  # only a new finding fails
    location = store or str(tmp_path / ".local" / "state" / "gpuaudit" / "history.sqlite")
    listed = CliRunner().invoke(main, ["history", "--history", location, "-f", "json"])
    assert listed.exit_code == 0, listed.output
    scans = json.loads(listed.stdout)["scans"]  # newest first; night 4 scanned nothing
    assert [s["verdict"].upper() for s in scans] == verdicts[::-1]

    assert unreachable.returncode == 3, unreachable.stderr
    assert len(box.messages) == 4
    assert [m["Subject"] for m in box.messages[:3]] == [
        f"gpuaudit {server}: PASS, 0 new failed findings",
        f"gpuaudit {server}: FAIL, {len(new)} new failed findings",
        f"gpuaudit {server}: FAIL, {len(new) - 1} new failed findings",
    ]
    down = " ".join(str(box.messages[3]["Subject"]).split())  # a long subject is folded
    assert down.startswith(f"gpuaudit {server}: ERROR (exit 3): ")
    *posts, post_down = [json.loads(body) for _, _, body in received.posts]
    assert post_down["subject"] == down
    assert post_down["summary"]["server"] == server
    assert post_down["summary"]["exit_status"] == 3
    summaries = [post["summary"] for post in posts]
    assert [s["verdict"] for s in summaries] == ["PASS", "FAIL", "FAIL"]
    assert summaries[0]["baseline_created"] is not None
    assert [s["resolved"] for s in summaries] == [0, len(resolved), len(resolved)]
    assert [sum(s["new"].values()) for s in summaries] == [0, len(new), len(new) - 1]
    assert {(f["rule"], f["object"]) for f in summaries[2]["new_findings"]} == new - {accepted}

    # The history: each finding's first-seen time and age, what changed since the last
    # scan, and the trend series. Night 1 is the baseline (its report set is pruned).
    if store is None:  # SQLite at the default place, under the job's home
        assert (tmp_path / ".local" / "state" / "gpuaudit" / "history.sqlite").is_file()
    night1 = json.loads((tmp_path / "srv" / "baseline.json").read_text(encoding="utf-8"))
    night2, night3 = (json.loads(p.read_text(encoding="utf-8")) for p in jsons)
    times = [when(doc["source"]["checked_at"]) for doc in (night1, night2, night3)]
    assert times == sorted(times)
    for doc, added, gone, waived_now in (
        (night2, new, resolved, set()),
        (night3, set(), set(), {accepted}),  # waived since night 2: not resolved
    ):
        changes = doc["summary"]["since_last_scan"]
        assert {(f["rule"], f["object"]) for f in changes["new"]} == added
        assert {(f["rule"], f["object"]) for f in changes["resolved"]} == gone
        assert {(f["rule"], f["object"]) for f in changes["newly_waived"]} == waived_now
    aged = {(f["rule"], f["object"]): f for f in night3["findings"] if f["status"] == "fail"}
    assert {pair for pair, f in aged.items() if f["severity"] != "info"} == failed_pairs(
        jsons[0]
    ) - {accepted}
    was_open = {(f["rule"], f["object"]) for f in night1["findings"] if f["status"] != "pass"}
    for pair, finding in aged.items():
        first = times[0] if pair in was_open else times[1]  # notices age like failures
        assert when(finding["first_seen"]) == first, pair
        assert finding["age_days"] == (times[2] - first).days
    trend = night3["trend"]
    assert [when(p["checked_at"]) for p in trend] == times
    for point, doc in zip(trend, (night1, night2, night3), strict=True):
        unwaived = [f for f in doc["findings"] if f["status"] == "fail"]
        failing = [f for f in unwaived if f["severity"] != "info"]  # info: notices
        for severity, count in point["failed"].items():
            assert count == sum(f["severity"] == severity for f in failing), severity
        assert "info" not in point["failed"] and sum(point["failed"].values()) == len(failing)
        assert point["notices"] == len(unwaived) - len(failing)
        assert point["waived"] == sum(f["status"] == "waived" for f in doc["findings"])
        tolerates = {s["cluster"]: s["tolerates"] for s in doc["simulations"]}
        assert point["tolerates"] == tolerates
    html = next(p for p in sets[-1] if p.suffix == ".html").read_text(encoding="utf-8")
    section = re.search(r'<section id="trends">(.*?)</section>', html, re.S)
    assert section and "The last 3 scans" in section.group(1)
    # Failed findings, waived findings and notices, then one N+k chart and one
    # free-slots chart per cluster.
    clusters = {s["cluster"] for doc in (night1, night2, night3) for s in doc["simulations"]}
    charts = len(re.findall(r'<svg class="trend"', section.group(1)))
    assert charts == 2 + 2 * len(clusters), charts
