"""Load: a fleet of 20 labs scanned 8 at a time, every report as a single scan of the
same estate would have it; and the large estate, 20 ms slower per request,
collected within the default timeout."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gpuaudit.cli.main import main
from gpuaudit.errors import ExitCode
from gpuaudit.vsphere import connect, obtain
from gpuaudit.vsphere.credentials import Credentials
from tests.conftest import SCENARIOS, require_tool
from tests.lab import generate
from tests.lab.lab import Lab

pytestmark = pytest.mark.live

FLEET_SCENARIOS = ("scenario-a", "scenario-b", "scenario-c", "broken", "hostile")
TARGETS = 20
CONCURRENCY = 8


@pytest.fixture(scope="module")
def labs() -> Iterator[list[tuple[str, Lab]]]:
    require_tool("go", "the load tests run the Go lab")
    started = [
        (name, Lab(SCENARIOS / f"{name}.yaml"))
        for name in (FLEET_SCENARIOS[i % len(FLEET_SCENARIOS)] for i in range(TARGETS))
    ]
    try:
        with ThreadPoolExecutor(max_workers=CONCURRENCY) as pool:
            list(pool.map(lambda item: item[1].start(), started))
        yield started
    finally:
        for _, lab in started:
            lab.stop()


def findings(report: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    return sorted((f["rule"], f["object"], f["status"], f["severity"]) for f in report["findings"])


def test_fleet_of_20_labs_at_concurrency_8(labs: list[tuple[str, Lab]], tmp_path: Path) -> None:
    lines = [
        f"  - {{name: t{i:02d}-{name}, server: '{lab.url}'}}" for i, (name, lab) in enumerate(labs)
    ]
    targets = tmp_path / "targets.yaml"
    targets.write_text(
        f"concurrency: {CONCURRENCY}\n"
        "defaults: {user: gpuaudit-lab, password_env: LAB_PW}\n"
        "targets:\n" + "\n".join(lines) + "\n"
    )
    out = tmp_path / "fleet"
    started = time.monotonic()
    result = CliRunner().invoke(
        main,
        ["scan", "--targets", str(targets), "-o", str(out), "-f", "json", "-f", "html"],
        env={"LAB_PW": labs[0][1].password},
    )
    elapsed = time.monotonic() - started
    assert result.exit_code in (ExitCode.OK, ExitCode.FINDINGS), result.output
    summary = json.loads(next(out.glob("gpuaudit-fleet-*.json")).read_text())
    assert [t["name"] for t in summary["targets"]] == [
        f"t{i:02d}-{name}" for i, (name, _) in enumerate(labs)
    ]
    assert all(t["verdict"] in ("PASS", "FAIL") and t["error"] is None for t in summary["targets"])

    # Each scenario scanned once on its own: what every fleet target of it must report.
    expected: dict[str, list[tuple[str, str, str, str]]] = {}
    hosts: dict[str, int] = {}
    for name in FLEET_SCENARIOS:
        lab = next(lab for n, lab in labs if n == name)
        single = tmp_path / "single" / name
        alone = CliRunner().invoke(
            main,
            ["scan", "--server", lab.url, "--user", lab.user, "-o", str(single), "-f", "json"],
            env={"GPUAUDIT_PASSWORD": lab.password, "GOVC_URL": None},
        )
        assert alone.exit_code in (ExitCode.OK, ExitCode.FINDINGS), alone.output
        report = json.loads(next(single.glob("*.json")).read_text())
        expected[name] = findings(report)
        hosts[name] = len(report["inventory"]["hosts"])
    for entry in summary["targets"]:
        name = entry["name"].split("-", 1)[1]
        (path,) = out.glob(f"gpuaudit-{entry['name']}-*.json")
        report = json.loads(path.read_text())
        assert findings(report) == expected[name], entry["name"]
        assert entry["hosts"] == hosts[name] == len(report["inventory"]["hosts"])
        assert len(list(out.glob(f"gpuaudit-{entry['name']}-*.html"))) == 1
    print(f"20 targets at concurrency {CONCURRENCY}: {elapsed:.1f} s")


def test_large_estate_with_latency_within_the_default_timeout() -> None:
    """64 clusters of 16 hosts, 10,240 VMs; every request 20 ms late."""
    require_tool("go", "the load tests run the Go lab")
    scenario = generate.generate(64, 16, 4, 10_240)
    with Lab(scenario, faults={"latency": "20ms"}, timeout=600) as lab:
        creds = Credentials(server=lab.url, user=lab.user, password=lab.password)
        started = time.monotonic()
        try:
            inventory = obtain.obtain_inventory(
                obtain.Live(credentials=creds, timeout=connect.DEFAULT_TIMEOUT)
            )
        except connect.ConnectError as exc:  # a timeout would end here, with exit status 3
            pytest.fail(f"exit status {ExitCode.CONNECT}: {exc}")
        elapsed = time.monotonic() - started
    assert len(inventory.hosts) == 1024 and len(inventory.vms) == 10_240
    assert sum(len(h.gpus) for h in inventory.hosts) == 4096
    assert not [g for g in inventory.gaps if g.kind != "ServiceInstance" and g.uncertain]
    print(f"large estate with 20 ms per request: {elapsed:.1f} s")
