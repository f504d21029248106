"""`gpuaudit collect`: the inventory to standard output, or under a name no other run holds."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gpuaudit.cli.collect import _save_inventory
from gpuaudit.cli.main import main
from gpuaudit.errors import ExitCode
from gpuaudit.inventory import Inventory
from tests.conftest import SCENARIOS
from tests.lab.scenario import load_scenario


@pytest.mark.live
def test_collect_to_a_dash_writes_the_inventory_to_standard_output(
    lab_factory: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lab = lab_factory("scenario-b")
    monkeypatch.chdir(tmp_path)
    secret = tmp_path / "pw"
    secret.write_text(lab.password + "\n")
    secret.chmod(0o600)
    args = ["collect", "-s", lab.url, "-u", lab.user, "--password-file", str(secret), "-o", "-"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == ExitCode.OK, result.output
    inventory = Inventory.from_dict(json.loads(result.stdout))
    scenario = load_scenario(SCENARIOS / "scenario-b.yaml")
    expected = sorted(
        h["name"] for dc in scenario["datacenters"] for c in dc["clusters"] for h in c["hosts"]
    )
    assert sorted(h.name for h in inventory.hosts) == expected
    assert not (tmp_path / "-").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pw"], "no file written"


def test_an_inventory_without_a_name_never_replaces_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    reports = tmp_path / "reports"
    reports.mkdir()
    # Whatever second the save falls in, a file of that name exists already.
    now = dt.datetime.now(dt.UTC)
    taken = []
    for ahead in range(3):
        stamp = (now + dt.timedelta(seconds=ahead)).strftime("%Y%m%dT%H%M%SZ")
        path = reports / f"inventory-vc01.example.com-{stamp}.json"
        path.write_text("another run's inventory")
        taken.append(path)
    saved = _save_inventory(b'{"schema_version": 1}', None, "vc01.example.com")
    assert saved.parent == Path("reports")
    assert saved.name.endswith("-1.json"), saved
    assert (tmp_path / saved).read_bytes() == b'{"schema_version": 1}'
    assert all(p.read_text() == "another run's inventory" for p in taken)
