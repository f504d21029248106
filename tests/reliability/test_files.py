"""Nothing lost: reports written atomically, a full disk leaves no partial file, a
failed scan never touches an earlier report, inventory or cassette, and a failing
target in a fleet never costs the others their reports."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from gpuaudit.cli.main import main
from gpuaudit.common import files
from gpuaudit.errors import ExitCode
from tests.conftest import unused_port
from tests.support.report_fixtures import realistic_result


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under ``folder``: its bytes and modification time."""
    return {
        str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


class FullDisk:
    """A file object on a disk that fills up after ``room`` bytes."""

    def __init__(self, handle: Any, room: int) -> None:
        self.handle = handle
        self.room = room

    def write(self, data: bytes) -> int:
        if len(data) > self.room:
            self.handle.write(data[: self.room])
            self.handle.flush()
            self.room = 0
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.room -= len(data)
        return int(self.handle.write(data))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.handle, name)

    def __enter__(self) -> FullDisk:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.handle.close()


def fill_disk_after(monkeypatch: pytest.MonkeyPatch, room: int) -> None:
    real_fdopen = os.fdopen

    def fdopen(fd: int, *args: Any, **kwargs: Any) -> FullDisk:
        return FullDisk(real_fdopen(fd, *args, **kwargs), room)

    monkeypatch.setattr(files.os, "fdopen", fdopen)


def test_write_atomic_on_a_full_disk_keeps_the_earlier_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "report.json"
    target.write_bytes(b'{"earlier": true}\n')
    before = snapshot(tmp_path)
    fill_disk_after(monkeypatch, room=1000)
    with pytest.raises(OSError) as caught:
        files.write_atomic(target, b"x" * 100_000)
    assert caught.value.errno == errno.ENOSPC
    assert snapshot(tmp_path) == before  # no temporary file, the earlier one untouched


def test_write_atomic_when_fsync_reports_the_full_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "report.json"
    target.write_bytes(b"earlier")

    def fsync(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(files.os, "fsync", fsync)
    with pytest.raises(OSError):
        files.write_atomic(target, b"later")
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]
    assert target.read_bytes() == b"earlier"


@pytest.fixture
def inventory(tmp_path: Path) -> Path:
    path = tmp_path / "inventory.json"
    realistic_result().inventory.save(path)
    return path


@pytest.fixture
def earlier_reports(tmp_path: Path, inventory: Path) -> Path:
    out = tmp_path / "reports"
    result = CliRunner().invoke(main, ["scan", "--from", str(inventory), "-o", str(out)])
    assert result.exit_code in (ExitCode.OK, ExitCode.FINDINGS), result.output
    assert len(list(out.iterdir())) == 3
    return out


def assert_one_error(result: Result, code: int, *words: str) -> None:
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpuaudit: error: "), lines
    for word in words:
        assert word in lines[0], lines[0]


@pytest.mark.parametrize("room", [0, 5_000, 60_000])
def test_scan_on_a_full_disk(
    inventory: Path, earlier_reports: Path, monkeypatch: pytest.MonkeyPatch, room: int
) -> None:
    before = snapshot(earlier_reports)
    fill_disk_after(monkeypatch, room)
    result = CliRunner().invoke(
        main, ["scan", "--from", str(inventory), "-o", str(earlier_reports)]
    )
    assert_one_error(result, ExitCode.INPUT, "cannot write reports", "No space left on device")
    after = snapshot(earlier_reports)
    assert {k: v for k, v in after.items() if k in before} == before  # earlier ones intact
    for name, (data, _) in after.items():
        assert not name.startswith("."), name  # no temporary file left
        if name not in before:  # a report of this run finished before the disk was full
            assert name.endswith(".html") and data.rstrip().endswith(b"</html>")


def can_mount_tmpfs() -> bool:
    return os.geteuid() == 0 and shutil.which("mount") is not None


@contextlib.contextmanager
def tiny_disk(where: Path, size: str) -> Iterator[Path]:
    where.mkdir()
    done = subprocess.run(
        [
            *("mount", "-t", "tmpfs", "-o", f"size={size},mode=0755"),
            *(f"gpuaudit-{uuid.uuid4().hex}", str(where)),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=False)


@pytest.mark.skipif(not can_mount_tmpfs(), reason="mounting a tmpfs needs root")
def test_scan_on_a_really_full_disk(inventory: Path, tmp_path: Path) -> None:
    """ENOSPC from the kernel, on a 1 MB tmpfs filled up to its last few kilobytes."""
    with tiny_disk(tmp_path / "disk", "1m") as disk:
        out = disk / "reports"
        first = CliRunner().invoke(main, ["scan", "--from", str(inventory), "-o", str(out)])
        assert first.exit_code in (ExitCode.OK, ExitCode.FINDINGS), first.output
        before = snapshot(out)
        filler = disk / "filler"
        with open(filler, "wb", buffering=0) as handle, contextlib.suppress(OSError):
            while True:
                handle.write(b"\0" * 4096)
        filler.write_bytes(filler.read_bytes()[: -8 * 4096])  # leave 32 KB
        result = CliRunner().invoke(main, ["scan", "--from", str(inventory), "-o", str(out)])
        assert_one_error(result, ExitCode.INPUT, "cannot write reports", "No space left on device")
        after = snapshot(out)
        assert {k: v for k, v in after.items() if k in before} == before
        assert not [name for name in after if name.startswith(".")]


def test_failed_scan_leaves_earlier_files_alone(
    tmp_path: Path, earlier_reports: Path, fast: None
) -> None:
    inventory = tmp_path / "inventory.json"
    cassette = tmp_path / "case.yaml"
    cassette.write_text("an earlier cassette\n")
    before = snapshot(tmp_path)
    server = f"http://127.0.0.1:{unused_port()}/sdk"
    env = {"GPUAUDIT_PASSWORD": "pw", "GOVC_URL": None}
    runs = [
        ["scan", "--server", server, "-u", "u", "-o", str(earlier_reports)],
        [
            "scan",
            "--server",
            server,
            "-u",
            "u",
            "-o",
            str(earlier_reports),
            "--record",
            str(cassette),
        ],
        ["collect", "--server", server, "-u", "u", "-o", str(inventory)],
        ["collect", "--server", server, "-u", "u", "-o", str(inventory), "--record", str(cassette)],
    ]
    for args in runs:
        result = CliRunner().invoke(main, args, env=env)
        assert_one_error(result, ExitCode.CONNECT, "connection refused")
    assert snapshot(tmp_path) == before


@pytest.mark.live
def test_recording_replaces_the_cassette_only_on_success(
    lab_factory: Any, tmp_path: Path, fast: None
) -> None:
    cassette = tmp_path / "case.yaml"
    cassette.write_text("an earlier cassette\n")
    broken = lab_factory("scenario-b", faults={"status": "503@RetrievePropertiesEx:1-"})
    args = ["collect", "-u", broken.user, "-o", str(tmp_path / "inv.json"), "--record"]
    env = {"GPUAUDIT_PASSWORD": broken.password, "GOVC_URL": None}
    failed = CliRunner().invoke(main, [*args, str(cassette), "--server", broken.url], env=env)
    assert_one_error(failed, ExitCode.CONNECT, "HTTP 503")
    assert cassette.read_text() == "an earlier cassette\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["case.yaml"]
    working = lab_factory("scenario-b")
    done = CliRunner().invoke(main, [*args, str(cassette), "--server", working.url], env=env)
    assert done.exit_code == ExitCode.OK, done.output
    assert "interactions:" in cassette.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["case.yaml", "inv.json"]


@pytest.mark.live
def test_a_recording_that_cannot_be_written(
    lab_factory: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Exit 2 naming the cassette, as for any file gpuaudit cannot write; not a
    connection error. The earlier cassette stays."""
    from vcr.persisters.filesystem import FilesystemPersister

    lab = lab_factory("scenario-b")
    env = {"GPUAUDIT_PASSWORD": lab.password, "GOVC_URL": None}
    args = ["collect", "--server", lab.url, "-u", lab.user, "-o", str(tmp_path / "inv.json")]
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    inside_a_file = not_a_folder / "case.yaml"
    result = CliRunner().invoke(main, [*args, "--record", str(inside_a_file)], env=env)
    assert_one_error(result, ExitCode.INPUT, str(inside_a_file), "cannot record here")

    cassette = tmp_path / "case.yaml"
    cassette.write_text("an earlier cassette\n")

    def full(*_args: Any, **_kwargs: Any) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(FilesystemPersister, "save_cassette", full)
    result = CliRunner().invoke(main, [*args, "--record", str(cassette)], env=env)
    assert_one_error(result, ExitCode.INPUT, str(cassette), "No space left on device")
    assert cassette.read_text() == "an earlier cassette\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["case.yaml", "file"]
    # The recorder let go of the connection classes it had patched.
    import http.client

    import pyVmomi.SoapAdapter

    assert http.client.HTTPSConnection.__module__ == "http.client"
    assert pyVmomi.SoapAdapter.HTTPConnection is http.client.HTTPConnection


@pytest.mark.live
def test_fleet_keeps_every_good_targets_reports(
    lab_factory: Any, tmp_path: Path, fast: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Targets that fail in every way (refused, failing mid-scan, unable to write
    their reports) beside good ones: the good ones' reports are all there, whole."""
    from gpuaudit import report

    good = [lab_factory("scenario-b"), lab_factory("scenario-c")]
    failing = lab_factory("scenario-b", faults={"status": "503@RetrievePropertiesEx:1-"})
    full = lab_factory("scenario-a")
    lines = [f"  - {{name: good{i}, server: '{lab.url}'}}" for i, lab in enumerate(good)]
    lines += [
        f"  - {{name: down, server: 'http://127.0.0.1:{unused_port()}/sdk'}}",
        f"  - {{name: failing, server: '{failing.url}'}}",
        f"  - {{name: full, server: '{full.url}'}}",
    ]
    targets = tmp_path / "targets.yaml"
    targets.write_text(
        "concurrency: 5\ndefaults: {user: gpuaudit-lab, password_env: LAB_PW}\ntargets:\n"
        + "\n".join(lines)
        + "\n"
    )
    real_write = report.write_reports

    def write_reports(result: Any, output_dir: Path, formats: Any, server: str, *a: Any) -> Any:
        if server == "full":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(result, output_dir, formats, server, *a)

    monkeypatch.setattr(report, "write_reports", write_reports)
    out = tmp_path / "reports"
    result = CliRunner().invoke(
        main,
        ["scan", "--targets", str(targets), "-o", str(out)],
        env={"LAB_PW": good[0].password},
    )
    assert result.exit_code == ExitCode.CONNECT, result.output
    summary = json.loads(next(out.glob("gpuaudit-fleet-*.json")).read_text())
    verdicts = {t["name"]: (t["verdict"], t["error"] or "") for t in summary["targets"]}
    assert verdicts["down"][0] == verdicts["failing"][0] == verdicts["full"][0] == "ERROR"
    assert "connection refused" in verdicts["down"][1]
    assert "HTTP 503" in verdicts["failing"][1]
    assert "No space left on device" in verdicts["full"][1]
    for name in ("good0", "good1"):
        assert verdicts[name][0] in ("PASS", "FAIL")
        (json_report,) = out.glob(f"gpuaudit-{name}-*.json")
        assert json.loads(json_report.read_text())["inventory"]["hosts"]
        assert len(list(out.glob(f"gpuaudit-{name}-*"))) == 3
    for name in ("down", "failing", "full"):
        assert not list(out.glob(f"gpuaudit-{name}-*"))
    assert not [p for p in out.iterdir() if p.name.startswith(".")]


# The command line with every temporary file of the workbook's sheets on a full disk:
# each is a symlink to /dev/full, where every write fails with ENOSPC.
SHEETS_ON_A_FULL_DISK = """
import itertools, os, sys
import openpyxl.worksheet._writer as writer

folder, count = sys.argv.pop(1), itertools.count()

def on_a_full_disk(suffix=""):
    path = os.path.join(folder, f"sheet-{next(count)}{suffix}.xml")
    os.symlink("/dev/full", path)
    writer.ALL_TEMP_FILES.append(path)
    return path

writer.create_temporary_file = on_a_full_disk
from gpuaudit.cli.main import main
main()
"""


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_workbook_on_a_full_disk_is_one_line(inventory: Path, tmp_path: Path) -> None:
    """openpyxl writes each sheet to a temporary file: when those fail, one line and
    exit 2, never an 'Exception ignored in ... WorksheetWriter.get_stream' traceback."""
    sheets, out = tmp_path / "sheets", tmp_path / "reports"
    sheets.mkdir()
    args = ["scan", "--from", str(inventory), "-o", str(out), "-f", "xlsx", "--no-history"]
    done = subprocess.run(
        [sys.executable, "-c", SHEETS_ON_A_FULL_DISK, str(sheets), "-q", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        check=False,
    )
    assert done.returncode == ExitCode.INPUT, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"gpuaudit: error: cannot write reports to {out}: No space left on device"
    ]
    assert list(sheets.iterdir()) == []  # the sheets' temporary files are removed
    assert not out.exists() or list(out.iterdir()) == []
