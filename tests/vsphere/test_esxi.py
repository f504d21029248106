"""A standalone ESXi host, scanned directly: tests/scenarios/esxi.yaml and its cassette.

The server is the host itself (about.apiType HostAgent): no vCenter setting, no
licence assignment manager, no cluster, and GPU counters for the last hour only.
The collector must read it cleanly (no gap, no traceback), and the checker must
report nothing that only a vCenter has (vMotion, HA) while the host's own rules
still examine it. The live tests serve the ESX model with the lab.
"""

from __future__ import annotations

import copy
import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from pyVmomi import vim

from gpuaudit.cli.main import main
from gpuaudit.inventory import Inventory
from gpuaudit.results import AuditResult
from gpuaudit.rules import catalogue
from gpuaudit.verdict.check import run_checks
from gpuaudit.vsphere import connect, obtain
from gpuaudit.vsphere.collect import collect
from gpuaudit.vsphere.collect.managers import read_managers
from gpuaudit.vsphere.collect.telemetry import choose_interval
from gpuaudit.vsphere.connect import ConnectError
from tests.conftest import CASSETTES, SCENARIOS
from tests.lab.expected import expected_inventory
from tests.lab.scenario import load_scenario

TODAY = dt.date(2027, 1, 15)
HOST = "esx-edge01.lab.local"
# Rules about what only a vCenter has: vMotion, vSphere HA and the cluster designs,
# and the cluster-wide storage checks.
VCENTER_ONLY = {
    *(f"VM-0{i}" for i in range(1, 8)),
    *(f"HA-0{i}" for i in range(1, 9)),
    "DS-01",
    "DS-02",
    "ST-01",
    "ST-03",
}


@pytest.fixture(scope="module")
def inventory() -> Inventory:
    return obtain.obtain_inventory(obtain.Replay(CASSETTES / "esxi.yaml"))


@pytest.fixture(scope="module")
def result(inventory: Inventory) -> AuditResult:
    return run_checks(inventory, None, TODAY)


def test_the_server_is_the_host_itself(inventory: Inventory) -> None:
    vc = inventory.vcenter
    assert (vc.api_type, vc.product, vc.version) == ("HostAgent", "VMware ESXi", "8.0.3")
    assert vc.standalone_esxi
    # The setting is vCenter's: not asked, not a gap.
    assert vc.vgpu_hotmigrate_enabled is None
    # Only the vGPU manager version, which the Read-only role cannot read, is not read.
    assert [g for g in inventory.gaps if g.uncertain] == []
    assert [g.privilege for g in inventory.gaps] == ["Host.Config.Image"]
    assert inventory.datacenters == ["ha-datacenter"]
    assert inventory.clusters == []
    (host,) = inventory.hosts
    assert (host.name, host.cluster, host.datacenter) == (HOST, None, "ha-datacenter")
    assert {vm.host for vm in inventory.vms} == {HOST}
    assert all(vm.cluster is None and vm.restart_priority is None for vm in inventory.vms)


def test_the_licence_is_the_hosts_own(inventory: Inventory) -> None:
    lic = inventory.licensing
    assert lic.collected and lic.vcenter is None and lic.note == ""
    (host,) = inventory.hosts
    assert host.licence is not None
    assert host.licence.edition_key == "esx.enterprisePlus.cpuPackageCoreLimited"
    assert "vgpu" in host.licence.features


def test_counters_cover_the_last_hour_in_real_time(inventory: Inventory) -> None:
    tel = inventory.telemetry
    assert (tel.window_hours, tel.interval_s, tel.statistics_level) == (1, 20, None)
    assert "last hour" in tel.note
    start, end = dt.datetime.fromisoformat(tel.start), dt.datetime.fromisoformat(tel.end)
    assert end - start == dt.timedelta(hours=1)
    (host,) = inventory.hosts
    assert host.telemetry is not None and host.telemetry.status == "reported"
    vgpu, passthrough = sorted(host.gpus, key=lambda g: g.pci_id)
    assert vgpu.telemetry is not None and vgpu.telemetry.utilization_percent is not None
    assert vgpu.telemetry.utilization_percent.samples == 180
    assert passthrough.telemetry is None  # the host cannot see into a passthrough GPU


def test_esxi_intervals_have_no_level() -> None:
    # ESXi's one historical interval (the SDK guide: level null); a vCenter's have one.
    past_day = vim.HistoricalInterval(
        key=1, samplingPeriod=300, name="PastDay", length=129600, enabled=True
    )
    assert choose_interval(dt.timedelta(hours=24), [past_day]) == (300, None)


def test_no_vcenter_only_finding(result: AuditResult) -> None:
    assert result.errors == []
    assert result.simulations == [] and result.designs == {}
    assert {f.rule for f in result.findings} & VCENTER_ONLY == set()
    # The only failures are those the scenario expects (LIC-01's stated assumption).
    expect = load_scenario(SCENARIOS / "esxi.yaml")["expect"]
    failed = {(f.rule, f.object) for f in result.findings if f.status == "fail"}
    assert failed == {(e["rule"], name) for e in expect for name in e["fail"]}
    assert {f.severity for f in result.findings if f.status == "fail"} <= {"info"}


def test_the_hosts_own_rules_examine_it(result: AuditResult) -> None:
    expect = load_scenario(SCENARIOS / "esxi.yaml")["expect"]
    assert expect
    for entry in expect:
        findings = [f for f in result.findings if f.rule == entry["rule"]]
        assert {f.object for f in findings if f.status == "fail"} == set(entry["fail"])
        for name in entry["pass"]:
            mine = [f for f in findings if f.object == name]
            assert mine, f"{entry['rule']} did not examine {name}"
            assert {f.status for f in mine} == {"pass"}, [f.message for f in mine]


def test_the_same_host_under_a_vcenter_gets_the_vcenter_rules() -> None:
    # The twin: the oracle's inventory of this scenario, as if a vCenter served it.
    inv = expected_inventory(load_scenario(SCENARIOS / "esxi.yaml"))
    twin = copy.deepcopy(inv)
    twin.vcenter.api_type = "VirtualCenter"
    verdicts = {(f.rule, f.object): f.status for f in run_checks(twin, None, TODAY).findings}
    assert verdicts[("VM-01", "vCenter")] == "fail"  # the setting was not read
    assert verdicts[("HA-04", "edge-inference-01")] == "fail"  # fixed passthrough
    assert verdicts[("VM-05", "edge-vdi-01")] == "pass"
    # The host's vGPU manager version is not read, so its branch cannot be checked.
    assert verdicts[("VM-06", HOST)] == "unproven"
    rules = {f.rule for f in run_checks(inv, None, TODAY).findings}
    assert rules & {"VM-01", "HA-04", "VM-05", "VM-06"} == set()


def test_scan_replay_exits_zero(tmp_path: Path, no_network: None) -> None:
    out = tmp_path / "out"
    outcome = CliRunner().invoke(
        main, ["scan", "--replay", str(CASSETTES / "esxi.yaml"), "-f", "json", "-o", str(out)]
    )
    assert outcome.exit_code == 0, outcome.output
    assert len(list(out.glob("*.json"))) == 1


def test_every_rule_is_known() -> None:
    assert {r.id for r in catalogue()} >= VCENTER_ONLY


# -- live: the lab serves the ESX model ---------------------------------------------------


@pytest.mark.live
def test_lab_serves_a_host_agent(lab_factory: Any) -> None:
    lab = lab_factory("esxi", tls=True)
    server = connect.parse_server(lab.url)
    with connect.session(server, lab.user, lab.password, ca_file=lab.cert_file) as si:
        content = si.RetrieveContent()
        assert si._stub.version == "vim.version.v8_0_3_0"
        about = content.about
        assert (about.apiType, about.apiVersion) == ("HostAgent", "8.0.3.0")
        assert about.fullName == "VMware ESXi 8.0.3 build-24022510"
        assert content.rootFolder._moId == "ha-folder-root"
        with pytest.raises(vim.fault.InvalidName):
            content.setting.QueryOptions("vgpu.hotmigrate.enabled")
        perf_props, licences = read_managers(content)
        assert licences.get("licenseAssignmentManager") is None and licences.missing == {}
        (licence,) = licences.get("licenses")
        assert licence.editionKey == "esx.enterprisePlus.cpuPackageCoreLimited"
        (interval,) = perf_props.get("historicalInterval")
        assert (interval.samplingPeriod, interval.length, interval.level) == (300, 129600, None)
        perf = content.perfManager
        host = vim.HostSystem("ha-host", si._stub)
        assert host.name == HOST and host.parent.name == HOST
        counter = next(
            c.key
            for c in perf_props.get("perfCounter")
            if c.groupInfo.key == "gpu"
            and c.nameInfo.key == "utilization"
            and c.rollupType == "average"
        )
        now = si.CurrentTime()
        metric = vim.PerformanceManager.MetricId(counterId=counter, instance="*")

        def query(interval_id: int, span: dt.timedelta) -> list[Any]:
            spec = vim.PerformanceManager.QuerySpec(
                entity=host,
                startTime=now - span,
                endTime=now,
                intervalId=interval_id,
                metricId=[metric],
            )
            (answer,) = perf.QueryPerf(querySpec=[spec])
            return list(answer.value or [])

        (series,) = query(20, dt.timedelta(hours=1))
        assert (series.id.instance, len(series.value)) == ("0000:3b:00.0", 180)
        assert query(300, dt.timedelta(hours=24)) == []  # no rollups from ESXi itself


@pytest.mark.live
def test_a_host_agent_scan_survives_a_dropped_request(lab_factory: Any) -> None:
    lab = lab_factory("esxi", faults={"drop": "RetrievePropertiesEx:1"})
    with connect.session(connect.parse_server(lab.url), lab.user, lab.password) as si:
        inventory = collect(si, source=lab.url)
    assert inventory.vcenter.api_type == "HostAgent"
    assert [g for g in inventory.gaps if g.uncertain] == []


@pytest.mark.live
def test_a_host_agent_refuses_other_credentials(lab_factory: Any) -> None:
    lab = lab_factory("esxi")
    with pytest.raises(ConnectError, match="user name or password is wrong"):
        connect.login(connect.parse_server(lab.url), lab.user, "not-the-password")
