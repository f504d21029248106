"""Live tier: the lab serves each scenario, and the committed cassettes still tell the truth."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gpuaudit.cli.main import main
from gpuaudit.inventory import Inventory
from gpuaudit.vsphere import connect
from gpuaudit.vsphere.collect import collect
from tests.conftest import CASSETTES, RECORDED, SCENARIOS
from tests.lab.expected import comparable, expected_inventory
from tests.lab.record import normalised, record
from tests.lab.scenario import load_scenario

pytestmark = pytest.mark.live


@pytest.mark.parametrize("name", RECORDED)
def test_recording_matches_committed_cassette(name: str, tmp_path: Path) -> None:
    fresh = tmp_path / f"{name}.yaml"
    record(SCENARIOS / f"{name}.yaml", fresh)
    committed = normalised(CASSETTES / f"{name}.yaml")
    assert normalised(fresh) == committed, (
        f"cassettes/{name}.yaml no longer matches the lab: re-record it with "
        f"python -m tests.lab.record {name}"
    )


@pytest.mark.parametrize("name", ["demo", "esxi"])
def test_recording_on_another_machine_matches_committed_cassette(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The recorder's user agent as another machine would send it: another kernel,
    # Python build and architecture. vCenter and ESXi echo it in their answers.
    import pyVmomi.SoapAdapter

    for attr, value in (
        ("OS_NAME", "Linux"),
        ("OS_VERSION", "5.10.0-99-other-machine"),
        ("OS_ARCH", "aarch64"),
        ("PYTHON_VERSION", "3.11.99"),
    ):
        monkeypatch.setattr(pyVmomi.SoapAdapter, attr, value)
    fresh = tmp_path / f"{name}.yaml"
    record(SCENARIOS / f"{name}.yaml", fresh)
    text = fresh.read_text(encoding="utf-8")
    assert "other-machine" not in text and "3.11.99" not in text
    assert normalised(fresh) == normalised(CASSETTES / f"{name}.yaml")


@pytest.mark.parametrize("name", RECORDED)
def test_live_collection_matches_scenario(name: str, lab_factory: Any) -> None:
    lab = lab_factory(name)
    with connect.session(connect.parse_server(lab.url), lab.user, lab.password) as si:
        inventory = collect(si, source=lab.url)
    expected = expected_inventory(load_scenario(SCENARIOS / f"{name}.yaml"))
    assert comparable(inventory) == comparable(expected)


def test_collect_command_writes_an_inventory_that_loads_back(
    lab_factory: Any, tmp_path: Path
) -> None:
    lab = lab_factory("scenario-b")
    out = tmp_path / "inventory.json"
    result = CliRunner().invoke(
        main,
        ["collect", "--server", lab.url, "--user", lab.user, "--output", str(out)],
        env={"GPUAUDIT_PASSWORD": lab.password},
    )
    assert result.exit_code == 0, result.output
    loaded = Inventory.load(out)
    expected = expected_inventory(load_scenario(SCENARIOS / "scenario-b.yaml"))
    assert comparable(loaded) == comparable(expected)
    assert lab.password not in out.read_text(encoding="utf-8")
    # And --from analyses it offline, with the same inventory as a live scan.
    scan = CliRunner().invoke(
        main, ["scan", "--from", str(out), "--output-dir", str(tmp_path), "--format", "json"]
    )
    assert scan.exit_code in (0, 1), scan.output


def test_fields_newer_than_the_negotiated_api_are_gaps(lab_factory: Any) -> None:
    scenario = load_scenario(SCENARIOS / "scenario-b.yaml")
    scenario["vcenter"]["api_version"] = "7.0.3.0"  # before vgpuMode (8.0 U3)
    lab = lab_factory(scenario)
    with connect.session(connect.parse_server(lab.url), lab.user, lab.password) as si:
        assert si._stub.version == "vim.version.v7_0_3_0"
        inventory = collect(si, source=lab.url)
    gaps = {(g.property, g.reason.split(";")[0]) for g in inventory.gaps}
    assert ("config.graphicsInfo.vgpuMode", "needs API 8.0.3.0") in gaps
    assert all(gpu.vgpu_mode is None for host in inventory.hosts for gpu in host.gpus)
    # What 7.0 U3 does carry still arrives.
    assert all(vm.gpus[0].migrate_supported for vm in inventory.vms if vm.gpus)
