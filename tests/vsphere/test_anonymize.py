"""Anonymised recordings: stable pseudonyms in the cassette and the reports alike."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gpuaudit.cli.main import main
from gpuaudit.inventory import Inventory
from gpuaudit.verdict.check import run_checks
from gpuaudit.vsphere import obtain
from gpuaudit.vsphere.anonymize import anonymize_cassette
from tests.conftest import CASSETTES


def renamed(inventory: Inventory, mapping: dict[str, str]) -> dict[str, Any]:
    """The inventory with every mapped name replaced, as the anonymised replay must read."""

    def walk(value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            out = {}
            for k, v in value.items():
                out[mapping.get(k, k) if key == "restart_priority_overrides" else k] = walk(v, k)
            return out
        if isinstance(value, list):
            return [walk(v, key) for v in value]
        if isinstance(value, str) and key in NAME_FIELDS:
            return mapping.get(value, value)
        return value

    return walk(dataclasses.asdict(inventory))


NAME_FIELDS = {
    "name",
    "datacenter",
    "cluster",
    "host",
    "datastores",
    "vms",
    "datacenters",
    "object",
    "failover_hosts",
    # the host whose QueryConfigTarget answer a host carries
    "stun_estimates_host",
    "vgpu_profile_info_host",
    "device_groups_host",
}


@pytest.mark.parametrize("name", ["demo", "hostile"])
def test_anonymized_replay_is_the_original_renamed(name: str, tmp_path: Path) -> None:
    copy = tmp_path / f"{name}.yaml"
    shutil.copy(CASSETTES / f"{name}.yaml", copy)
    mapping = anonymize_cassette(copy)
    original = obtain.obtain_inventory(obtain.Replay(CASSETTES / f"{name}.yaml"))
    anonymous = obtain.obtain_inventory(obtain.Replay(copy))
    for inv in (original, anonymous):
        inv.source = inv.collected_at = ""
    assert dataclasses.asdict(anonymous) == renamed(original, mapping)
    # Every entity was renamed, and no original name survives in a name-bearing place.
    names = {h.name for h in original.hosts} | {v.name for v in original.vms}
    names |= {c.name for c in original.clusters} | {d.name for d in original.datastores}
    assert names <= set(mapping)
    assert len(set(mapping.values())) == len(mapping)
    text = copy.read_text(encoding="utf-8")
    for real in names:
        assert f">{real}<" not in text and f"] {real}/" not in text


def test_pseudonyms_are_stable(tmp_path: Path) -> None:
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    for path in (first, second):
        shutil.copy(CASSETTES / "demo.yaml", path)
    assert anonymize_cassette(first) == anonymize_cassette(second)


@pytest.mark.live
def test_record_anonymized_then_replay_matches_live(lab_factory: Any, tmp_path: Path) -> None:
    lab = lab_factory("demo")
    cassette = tmp_path / "support-case.yaml"
    env = {"GPUAUDIT_PASSWORD": lab.password}
    live_out, replay_out = tmp_path / "live", tmp_path / "replay"
    common = ["--server", lab.url, "--user", lab.user, "-f", "json"]
    live = CliRunner().invoke(main, ["scan", *common, "-o", str(live_out)], env=env)
    recorded = CliRunner().invoke(
        main,
        ["scan", *common, "-o", str(tmp_path / "rec"), "--record", str(cassette), "--anonymize"],
        env=env,
    )
    assert recorded.exit_code == live.exit_code, recorded.output
    replayed = CliRunner().invoke(
        main, ["scan", "--replay", str(cassette), "-f", "json", "-o", str(replay_out)]
    )
    assert replayed.exit_code == live.exit_code, replayed.output
    text = cassette.read_text(encoding="utf-8")
    assert lab.password not in text and lab.user not in text

    # The findings of the replay are the live scan's, with pseudonyms for names.
    live_inv = Inventory.load(_inventory_file(live_out, tmp_path / "live.json"))
    mapping = _mapping(live_inv, Inventory.load(_inventory_file(replay_out, tmp_path / "r.json")))
    live_findings = _findings(live_out)
    replay_findings = _findings(replay_out)
    assert replay_findings == sorted(
        (rule, mapping.get(obj, obj), status, severity)
        for rule, obj, status, severity in live_findings
    )
    assert not {obj for _, obj, _, _ in replay_findings} & set(mapping)


def _findings(folder: Path) -> list[tuple[str, str, str, str]]:
    report = json.loads(next(folder.glob("gpuaudit-*.json")).read_text())
    return sorted((f["rule"], f["object"], f["status"], f["severity"]) for f in report["findings"])


def _inventory_file(folder: Path, out: Path) -> Path:
    report = json.loads(next(folder.glob("gpuaudit-*.json")).read_text())
    out.write_text(json.dumps(report["inventory"]))
    return out


def _mapping(live: Inventory, anonymous: Inventory) -> dict[str, str]:
    """Pair names by position in each sorted list of a kind: pseudonyms sort like their names."""
    mapping = {}
    for kind in ("hosts", "vms", "clusters", "datastores"):
        real = sorted(o.name for o in getattr(live, kind))
        fake = sorted(o.name for o in getattr(anonymous, kind))
        assert len(real) == len(fake)
        mapping.update(zip(real, fake, strict=True))
    for real, fake in zip(sorted(live.datacenters), sorted(anonymous.datacenters), strict=True):
        mapping[real] = fake
    # GPU findings name "host/pci_id".
    for host in live.hosts:
        for gpu in host.gpus:
            mapping[f"{host.name}/{gpu.pci_id}"] = f"{mapping[host.name]}/{gpu.pci_id}"
    return mapping


def test_run_checks_on_anonymized_inventory(tmp_path: Path) -> None:
    copy = tmp_path / "demo.yaml"
    shutil.copy(CASSETTES / "demo.yaml", copy)
    anonymize_cassette(copy)
    result = run_checks(obtain.obtain_inventory(obtain.Replay(copy)))
    assert result.findings and not result.errors
