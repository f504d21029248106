"""Faults the lab injects (docs/reliability.md): each one survived with the same
inventory as a clean scan, or a clear error and exit status 3 within a bound."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from gpuaudit.cli.main import main
from gpuaudit.errors import ExitCode
from gpuaudit.inventory import Inventory
from gpuaudit.vsphere import resilience
from gpuaudit.vsphere.resilience import RetryPolicy
from tests.conftest import ROOT, SCENARIOS
from tests.lab import generate
from tests.lab.lab import Lab
from tests.lab.scenario import load_scenario

pytestmark = pytest.mark.live

FAST = RetryPolicy(attempts=3, base_delay=0.05, max_delay=0.2, jitter=0.5, restarts=2)


@pytest.fixture(autouse=True)
def fast_retries(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(resilience, "DEFAULT", FAST)
    caplog.set_level(logging.INFO, logger="gpuaudit.resilience")


def collect(lab: Lab, out: Path, *extra: str, timeout: float = 5) -> Result:
    return CliRunner().invoke(
        main,
        [
            "collect",
            "--server",
            lab.url,
            "--user",
            lab.user,
            "--timeout",
            str(timeout),
            "-o",
            str(out),
            *extra,
        ],
        env={"GPUAUDIT_PASSWORD": lab.password, "GOVC_URL": None},
    )


def shape(inventory: Inventory) -> dict[str, Any]:
    """What a scan read, without the values that change from one scan to the next."""
    return {
        "vcenter": inventory.vcenter.name,
        "hosts": [(h.name, h.connection_state, len(h.gpus), h.cluster) for h in inventory.hosts],
        "vms": [(v.name, v.host, v.power_state, len(v.gpus)) for v in inventory.vms],
        "datastores": [(d.name, [m.host for m in d.mounts]) for d in inventory.datastores],
        "clusters": [(c.name, c.ha_enabled) for c in inventory.clusters],
        "hotmigrate": inventory.vcenter.vgpu_hotmigrate_enabled,
        "gaps": sorted((g.object, g.property, g.reason) for g in inventory.gaps),
    }


def clean_shape(scenario: str | dict[str, Any], tmp: Path) -> dict[str, Any]:
    with Lab(scenario) as lab:
        result = collect(lab, tmp / "clean.json")
        assert result.exit_code == ExitCode.OK, result.output
    return shape(Inventory.load(tmp / "clean.json"))


@pytest.fixture(scope="module")
def scenario_b(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return clean_shape(SCENARIOS / "scenario-b.yaml", tmp_path_factory.mktemp("b"))


# More objects than one page of RetrievePropertiesEx (500): the read needs
# ContinueRetrievePropertiesEx, whose failures restart it.
PAGED = generate.generate(2, 3, 1, 560, gpu_vm_share=0.02)


@pytest.fixture(scope="module")
def paged(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    result = clean_shape(PAGED, tmp_path_factory.mktemp("paged"))
    assert len(result["vms"]) == 560
    return result


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "gpuaudit.resilience"]


SURVIVED = [
    # (id, lab fault switches, what the retry log must say)
    ("dropped connection", {"drop": "RetrievePropertiesEx:1"}, "connection broken"),
    ("dropped twice", {"drop": ["CreateContainerView:1", "RetrieveServiceContent:2"]}, "broken"),
    ("503", {"status": "503@RetrievePropertiesEx:1-2"}, "HTTP 503 Service Unavailable"),
    ("500", {"status": "500@CreateContainerView:1"}, "malformed answer"),
    ("503 on the version", {"status": "503@1"}, "vimServiceVersions.xml: HTTP 503"),
    ("dropped login", {"drop": "Login:1"}, "Login: connection broken"),
    ("malformed XML", {"malformed": "RetrievePropertiesEx:1"}, "malformed answer"),
    ("malformed content", {"malformed": "RetrieveServiceContent:2"}, "malformed answer"),
    ("stall", {"stall": "RetrievePropertiesEx:1"}, "no answer within the timeout"),
    ("latency", {"latency": "40ms"}, None),
]


@pytest.mark.parametrize(("faults", "logged"), [pytest.param(f, w, id=i) for i, f, w in SURVIVED])
def test_transient_faults_are_survived(
    scenario_b: dict[str, Any],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    faults: dict[str, Any],
    logged: str | None,
) -> None:
    with Lab(SCENARIOS / "scenario-b.yaml", faults=faults) as lab:
        result = collect(lab, tmp_path / "inv.json", timeout=1)
    assert result.exit_code == ExitCode.OK, result.output
    assert shape(Inventory.load(tmp_path / "inv.json")) == scenario_b
    if logged is not None:  # the fault did happen, and was retried
        assert any(logged in m and "trying again" in m for m in warnings(caplog)), warnings(caplog)


def test_latency_is_added_to_every_request(tmp_path: Path) -> None:
    with Lab(SCENARIOS / "scenario-b.yaml", faults={"latency": "100ms"}) as lab:
        started = time.monotonic()
        result = collect(lab, tmp_path / "inv.json")
        elapsed = time.monotonic() - started
    assert result.exit_code == ExitCode.OK, result.output
    assert elapsed >= 10 * 0.1  # version, content, login, view, read, settings, logout...


def login_count(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    original = resilience.ResilientStub.InvokeMethod

    def counting(self: Any, mo: Any, info: Any, args: Any, outer: Any = None) -> Any:
        calls.append(info.wsdlName)
        return original(self, mo, info, args, outer)

    monkeypatch.setattr(resilience.ResilientStub, "InvokeMethod", counting)
    return calls


@pytest.mark.parametrize(
    "operation", ["CreateContainerView", "RetrievePropertiesEx", "QueryOptions"]
)
def test_session_ended_mid_scan_one_relogin(
    scenario_b: dict[str, Any],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    operation: str,
) -> None:
    calls = login_count(monkeypatch)
    faults = {"invalidate-session": f"{operation}:1"}
    with Lab(SCENARIOS / "scenario-b.yaml", faults=faults) as lab:
        result = collect(lab, tmp_path / "inv.json")
    assert result.exit_code == ExitCode.OK, result.output
    assert shape(Inventory.load(tmp_path / "inv.json")) == scenario_b
    assert calls.count("Login") == 2  # the first, and exactly one more
    relogins = [m for m in warnings(caplog) if "logging in again" in m]
    assert relogins == [f"{operation}: the session has ended; logging in again"]


PAGED_FAULTS = [
    ("session ended", {"invalidate-session": "ContinueRetrievePropertiesEx:1"}),
    ("dropped page", {"drop": "ContinueRetrievePropertiesEx:1"}),
    ("malformed page", {"malformed": "ContinueRetrievePropertiesEx:1"}),
    ("stalled page", {"stall": "ContinueRetrievePropertiesEx:1"}),
    ("503 page", {"status": "503@ContinueRetrievePropertiesEx:1"}),
]


@pytest.mark.parametrize("faults", [pytest.param(f, id=i) for i, f in PAGED_FAULTS])
def test_a_lost_page_is_read_again(
    paged: dict[str, Any], tmp_path: Path, caplog: pytest.LogCaptureFixture, faults: Any
) -> None:
    with Lab(PAGED, faults=faults) as lab:
        result = collect(lab, tmp_path / "inv.json", timeout=2)
    assert result.exit_code == ExitCode.OK, result.output
    assert shape(Inventory.load(tmp_path / "inv.json")) == paged  # no page lost or doubled
    said = warnings(caplog)
    if "503" in str(faults):  # never acted on: the same page is asked for again
        assert any("HTTP 503" in m for m in said), said
    else:
        assert any("reading the inventory again (1 of 2)" in m for m in said), said


def assert_one_error(result: Result, *words: str) -> None:
    assert result.exit_code == ExitCode.CONNECT, result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpuaudit: error: "), lines
    for word in words:
        assert word in lines[0], lines[0]


PERSISTENT = [
    ("dropped from the 4th request", {"drop": "4-"}, ["connection", "broke", "tried 3 times"]),
    (
        "503 for good",
        {"status": "503@RetrievePropertiesEx:1-"},
        ["answered HTTP 503 Service Unavailable", "tried 3 times"],
    ),
    (
        "500 for good",
        {"status": "500@1-"},
        ["answered HTTP 500 Internal Server Error", "tried 3 times"],
    ),
    (
        "malformed for good",
        {"malformed": "RetrievePropertiesEx:1-"},
        ["not well-formed XML", "tried 3 times"],
    ),
    (
        "every session ended",
        {"invalidate-session": "4-"},
        ["ended the session", "logging in again did not restore it"],
    ),
    (
        "every page lost",
        {"drop": "ContinueRetrievePropertiesEx:1-"},
        ["interrupted too often"],
    ),
]


@pytest.mark.parametrize(("faults", "words"), [pytest.param(f, w, id=i) for i, f, w in PERSISTENT])
def test_persistent_faults_end_in_one_clear_error(
    tmp_path: Path, faults: dict[str, str], words: list[str]
) -> None:
    scenario = PAGED if "Continue" in str(faults) else SCENARIOS / "scenario-b.yaml"
    with Lab(scenario, faults=faults) as lab:
        started = time.monotonic()
        result = collect(lab, tmp_path / "inv.json", timeout=2)
        elapsed = time.monotonic() - started
    assert_one_error(result, "127.0.0.1", *words)
    assert not (tmp_path / "inv.json").exists()
    assert elapsed < 20, elapsed


def test_a_stalled_server_ends_within_the_bound(tmp_path: Path) -> None:
    """No hang: with the default retry policy, a server that never answers ends the scan
    after attempts x --timeout plus the backoff, with exit status 3."""
    timeout = 1.0
    policy = resilience.RetryPolicy()  # the default, in a separate process
    bound = policy.attempts * timeout + policy.worst_wait
    for faults in ({"stall": "RetrievePropertiesEx:1-"}, {"stall": "1-"}):
        with Lab(SCENARIOS / "scenario-b.yaml", faults=faults) as lab:
            started = time.monotonic()
            done = subprocess.run(
                [
                    *(sys.executable, "-m", "gpuaudit", "-q", "collect", "--server", lab.url),
                    *("--user", lab.user, "--timeout", str(timeout), "-o", tmp_path / "i.json"),
                ],
                env={"GPUAUDIT_PASSWORD": lab.password, "PATH": "/usr/bin:/bin"},
                capture_output=True,
                text=True,
                timeout=120,
                cwd=ROOT,
            )
            elapsed = time.monotonic() - started
        assert done.returncode == ExitCode.CONNECT, done.stderr
        assert done.stderr.strip().splitlines() == [done.stderr.strip()]
        assert "did not answer within 1 s (tried 3 times)" in done.stderr
        assert "--timeout" in done.stderr and "Traceback" not in done.stderr
        # Start-up of Python and pyVmomi, login, and logging out are on top of the bound.
        assert policy.attempts * timeout <= elapsed < bound + 15, (elapsed, bound)


def restricted_scenario() -> dict[str, Any]:
    scenario = load_scenario(SCENARIOS / "scenario-b.yaml")
    scenario["faults"] = {
        "no_permission": [
            {"object": "esx-b01.corp.local", "property": "config.graphicsInfo"},
            {"object": "vdi-design-03", "property": None},  # all but its name
        ]
    }
    hosts = scenario["datacenters"][0]["clusters"][0]["hosts"]
    hosts[2]["connection"] = "notResponding"  # esx-b03
    return scenario


def test_no_permission_and_a_host_not_responding(tmp_path: Path) -> None:
    with Lab(restricted_scenario()) as lab:
        result = CliRunner().invoke(
            main,
            [
                *("scan", "--server", lab.url, "--user", lab.user),
                *("-o", str(tmp_path), "-f", "json", "-f", "html"),
            ],
            env={"GPUAUDIT_PASSWORD": lab.password, "GOVC_URL": None},
        )
    assert result.exit_code in (ExitCode.OK, ExitCode.FINDINGS), result.output
    (path,) = tmp_path.glob("gpuaudit-*.json")
    report = json.loads(path.read_text())
    data01 = {f["object"]: f for f in report["findings"] if f["rule"] == "DATA-01"}
    failed = {name for name, f in data01.items() if f["status"] == "fail"}
    assert failed == {"esx-b01.corp.local", "vdi-design-03", "esx-b03.corp.local"}
    assert "config.graphicsInfo: NoPermission" in data01["esx-b01.corp.local"]["message"]
    assert "config.hardware.device: NoPermission" in data01["vdi-design-03"]["message"]
    assert "notResponding" in data01["esx-b03.corp.local"]["message"]
    assert data01["esx-b02.corp.local"]["status"] == "pass"
    # The rest of the estate is in the report, read as usual.
    inventory = report["inventory"]
    assert [h["name"] for h in inventory["hosts"]] == [f"esx-b0{i}.corp.local" for i in (1, 2, 3)]
    assert len(inventory["vms"]) == 7
    b02 = next(h for h in inventory["hosts"] if h["name"] == "esx-b02.corp.local")
    assert b02["gpus"] and b02["gpus"][0]["graphics_type"] == "sharedDirect"
    assert {f["rule"] for f in report["findings"]} - {"DATA-01"}, "other rules ran too"
    html = next(tmp_path.glob("gpuaudit-*.html")).read_text()
    assert "config.graphicsInfo: NoPermission" in html


def test_fault_switches_are_checked(tmp_path: Path) -> None:
    from tests.lab.lab import LabError

    for faults, words in (
        ({"drop": "0"}, "numbered from 1"),
        ({"status": "200@1"}, "from 400 to 599"),
        ({"stall": "5-3"}, "M >= N"),
        ({"latency": "soon"}, "invalid value"),
    ):
        with pytest.raises(LabError, match=words):
            Lab(SCENARIOS / "scenario-b.yaml", faults=faults).start()
