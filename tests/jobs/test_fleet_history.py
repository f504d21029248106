"""Past one machine: each vCenter scanned by its own process (as a pod or a cron job
on another machine would), all into one PostgreSQL history, then `gpuaudit fleet
report` builds the fleet summary from the latest scan of each."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.support.fleet_targets import scenario_size
from tests.support.postgres_server import PostgresServer, serve_postgres

pytestmark = [pytest.mark.postgres, pytest.mark.live]

LABS = ("scenario-a", "scenario-b", "scenario-c")


server = pytest.fixture(scope="module", name="server")(serve_postgres)


def gpuaudit(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "gpuaudit", "--no-color", *args],
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def targets_file(labs: dict[str, Any], folder: Path) -> tuple[Path, dict[str, str]]:
    """The labs as a targets file, in order, each with its own password variable."""
    lines, env = ["targets:"], {}
    for i, lab in enumerate(labs.values()):
        lines.append(
            f"  - {{server: '{lab.url}', user: {lab.user}, password_env: LAB{i}_PASSWORD}}"
        )
        env[f"LAB{i}_PASSWORD"] = lab.password
    path = folder / "targets.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path, env


def pod(index: int, targets: tuple[Path, dict[str, str]], url: str, out: Path) -> Any:
    """What one pod of the Indexed Job runs (deploy/kubernetes/cronjob.yaml)."""
    path, env = targets
    return gpuaudit(
        "-q", "scan", f"--targets={path}", f"--target-index={index}", f"--history={url}",
        "--format=json", f"--output-dir={out}", "--fail-on", "never",
        env=env,
    )  # fmt: skip


def finish(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    stdout, stderr = process.communicate(timeout=600)
    return process.returncode, stdout, stderr


def moment(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_the_fleet_report_holds_the_latest_scan_of_every_vcenter_with_its_age(
    server: PostgresServer, lab_factory: Any, tmp_path: Path
) -> None:
    url = server.create_database("fleet")
    # Three vCenters, each with its instance UUID (one simulator's is every lab's).
    labs = {name: lab_factory(name, instance_uuid=str(uuid.uuid4())) for name in LABS}
    targets = targets_file(labs, tmp_path)
    first = datetime.now(UTC).replace(microsecond=0)
    scans = [pod(i, targets, url, tmp_path / name) for i, name in enumerate(labs)]
    for process in scans:  # at once, as pods would
        code, _out, err = finish(process)
        assert code == 0 and err == "", err
    between = datetime.now(UTC)
    time.sleep(1.1)  # the second scan of scenario-a is a later second than every first one
    again = datetime.now(UTC).replace(microsecond=0)
    code, _out, err = finish(pod(0, targets, url, tmp_path / "again"))
    assert code == 0 and err == "", err
    time.sleep(1.1)
    reported = gpuaudit("fleet", "report", "--history", url, "-o", str(tmp_path / "fleet"))
    code, out, err = finish(reported)
    assert err == "" and code in (0, 1), err
    (summary,) = (tmp_path / "fleet").glob("gpuaudit-fleet-*.json")
    data = json.loads(summary.read_text())
    made = moment(data["scanned_at"])

    by_port = {t["server"].rsplit(":", 1)[-1].split("/")[0]: t for t in data["targets"]}
    assert sorted(by_port) == sorted(str(lab.port) for lab in labs.values())
    for name, lab in labs.items():
        target = by_port[str(lab.port)]
        checked = moment(target["checked_at"])
        earliest = again if name == "scenario-a" else first
        assert earliest <= checked <= made, (name, target["checked_at"])
        if name != "scenario-a":
            assert checked <= between
        assert target["age_seconds"] == int((made - checked).total_seconds())
        assert target["age_seconds"] >= 1
        assert (target["hosts"], target["gpus"], target["gpu_vms"]) == scenario_size(name)
        assert f"{target['name']}: {target['verdict']} (scanned " in out
    assert len(data["targets"]) == len(LABS)
