"""Operations readiness: GPU telemetry, monitoring coverage and licensing.

The replay tests read the committed cassettes: the telemetry scenario's failures
and clean twins per rule (expectations from tests/scenarios/telemetry.yaml), the
counter ids the lab numbers from 7001 found by name, and MON-01 on every GPU
host of the scenarios that declare no counters. The live tests start the lab: a
generated estate of 200 hosts stays within one QueryPerf call per 50 hosts, and
a vCenter with a low statistics level or no GPU counters yields MON-01, not a
traceback.
"""

from __future__ import annotations

import datetime as dt
import io
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import click
import jsonschema
import openpyxl
import pytest
from pyVmomi import vim

from gpuaudit.cli.shared import Duration
from gpuaudit.inventory import Gpu, Host, Inventory, Licence
from gpuaudit.model.policy import LicensingPolicy
from gpuaudit.report import render_html, render_json, render_junit, render_xlsx, report_schema
from gpuaudit.results import AuditResult
from gpuaudit.rules.licensing import licence_problems, vgpu_allowance
from gpuaudit.verdict.check import run_checks
from gpuaudit.vsphere import cassette, connect, obtain
from gpuaudit.vsphere.collect import collect
from gpuaudit.vsphere.collect.managers import ManagerProps
from gpuaudit.vsphere.collect.telemetry import (
    DEFAULT_QUERY_METRICS,
    MAX_QUERY_METRICS,
    choose_interval,
    collect_telemetry,
    hosts_per_query,
    match_instances,
    resolve_counters,
)
from tests.conftest import CASSETTES, RECORDED, SCENARIOS
from tests.lab.scenario import load_scenario

TODAY = dt.date(2027, 1, 15)
NEW_RULES = ("MON-01", "MON-02", "MON-03", "MON-04", "LIC-01", "LIC-02")


def replay(name: str) -> Inventory:
    return obtain.obtain_inventory(obtain.Replay(CASSETTES / f"{name}.yaml"))


@pytest.fixture(scope="module")
def telemetry() -> AuditResult:
    return run_checks(replay("telemetry"), None, TODAY)


# -- the telemetry cassette ---------------------------------------------------------------


@pytest.mark.parametrize("rule", NEW_RULES)
def test_each_rule_fails_where_built_to_and_passes_on_its_twins(
    telemetry: AuditResult, rule: str, no_network: None
) -> None:
    entries = [
        e for e in load_scenario(SCENARIOS / "telemetry.yaml")["expect"] if e["rule"] == rule
    ]
    assert entries and all(e["fail"] and e["pass"] for e in entries)
    findings = [f for f in telemetry.findings if f.rule == rule]
    assert {f.object for f in findings if f.status == "fail"} == {
        name for e in entries for name in e["fail"]
    }
    for name in (n for e in entries for n in e["pass"]):
        assert [f.status for f in findings if f.object == name] == ["pass"], name
    assert telemetry.errors == []


def test_counter_ids_are_found_by_name_not_assumed(telemetry: AuditResult) -> None:
    # The lab numbers its GPU counters from 7001 (none, average, maximum, minimum of
    # utilisation, ...), not the simulator's 558-570: only a lookup by name finds them.
    counters = telemetry.inventory.telemetry.counters
    assert counters == {
        "gpu.utilization.average": 7002,
        "gpu.mem.used.average": 7006,
        "gpu.mem.usage.average": 7010,
        "gpu.temperature.average": 7013,
        "gpu.power.used.average": 7014,
    }
    calls = [cassette.soap_call(i["request"].get("body")) for i in _interactions("telemetry")]
    perf = [args for op, _, args in calls if op == "QueryPerf"]
    assert len(perf) == 1
    asked = {int(n) for n in re.findall(r"counterId>(\d+)<", perf[0])}
    assert asked == set(counters.values())
    # One spec per connected GPU host, each asking for every instance.
    assert perf[0].count("querySpec") // 2 == 6
    assert "instance>*<" in perf[0]


def test_window_and_interval_come_from_the_server(telemetry: AuditResult) -> None:
    tel = telemetry.inventory.telemetry
    assert tel.collected and tel.window_hours == 24 and tel.interval_s == 300
    start = dt.datetime.fromisoformat(tel.start)
    end = dt.datetime.fromisoformat(tel.end)
    assert end - start == dt.timedelta(hours=24)
    # Replay asks what was recorded, whatever the wall clock says now.
    calls = [cassette.soap_call(i["request"].get("body"))[0] for i in _interactions("telemetry")]
    assert "CurrentTime" in calls


def test_gpu_summaries(telemetry: AuditResult) -> None:
    host = {h.name: h for h in telemetry.inventory.hosts}
    hot = next(g for g in host["esx-hot"].gpus if g.pci_id == "0000:3b:00.0")
    assert hot.telemetry is not None and hot.telemetry.matched_by == "order"
    assert hot.telemetry.instance == "gpu0"
    assert hot.telemetry.temperature_c is not None
    assert (hot.telemetry.temperature_c.peak, hot.telemetry.temperature_c.samples) == (91, 5)
    assert hot.telemetry.power_w is not None and hot.telemetry.power_w.peak == 72
    cool = next(g for g in host["esx-hot"].gpus if g.pci_id == "0000:5e:00.0")
    assert cool.telemetry is not None and cool.telemetry.power_w is None  # none declared
    full = next(g for g in host["esx-mon-ok"].gpus if g.pci_id == "0000:3b:00.0")
    assert full.telemetry is not None and len(full.telemetry.trend) == 48
    assert None not in full.telemetry.trend
    assert host["esx-pt"].telemetry is not None and host["esx-pt"].telemetry.status == "none"


def test_licences_are_read_per_host_and_keys_cut(telemetry: AuditResult) -> None:
    host = {h.name: h for h in telemetry.inventory.hosts}
    assert host["esx-hot"].licence is not None and host["esx-hot"].licence.evaluation
    assert host["esx-idle"].licence is not None
    assert host["esx-idle"].licence.expires == "2024-03-31"
    standard = host["esx-mon-none"].licence
    assert standard is not None and "vgpu" not in standard.features
    assert telemetry.inventory.licensing.vcenter is not None
    text = (CASSETTES / "telemetry.yaml").read_text(encoding="utf-8")
    keys = re.findall(r"<licenseKey>([^<]*)</licenseKey>", text)
    assert keys and all(k.startswith("*****-*****-*****-*****-") for k in keys)


def _declares_counters(name: str) -> bool:
    scenario = load_scenario(SCENARIOS / f"{name}.yaml")
    hosts = [
        h
        for dc in scenario["datacenters"]
        for h in [h for c in dc["clusters"] for h in c["hosts"]] + dc["standalone_hosts"]
    ]
    return any(g["telemetry"] for h in hosts for g in h["gpus"])


@pytest.mark.parametrize("name", [n for n in RECORDED if not _declares_counters(n)])
def test_a_scan_without_gpu_counters_fails_mon01_on_every_gpu_host(
    name: str, no_network: None
) -> None:
    result = run_checks(replay(name), None, TODAY)
    assert result.errors == []
    gpu_hosts = {h.name for h in result.inventory.hosts if h.gpus and h.connected}
    mon01 = [f for f in result.findings if f.rule == "MON-01"]
    assert {f.object for f in mon01 if f.status == "fail"} == gpu_hosts
    assert all(f.message.startswith("no GPU counters") for f in mon01)


def test_reports_carry_the_licence_summary(telemetry: AuditResult) -> None:
    doc = render_json(telemetry)
    jsonschema.Draft202012Validator(report_schema()).validate(doc)
    licences = doc["summary"]["licences"]
    assert licences["total"] == 13 and licences["passthrough_vms"] == 1
    assert licences["totals"]["NVIDIA RTX Virtual Workstation"] == 9
    assert "1 passthrough GPU VM with no edition declared is assumed" in licences["note"]
    book = openpyxl.load_workbook(io.BytesIO(render_xlsx(telemetry)))
    rows = list(book["Licences"].iter_rows(values_only=True))
    assert ("Total", "All editions", 13, None) in rows
    gpus = list(book["GPUs"].iter_rows(values_only=True))
    header = gpus[0]
    peak = header.index("Temp Peak C")
    assert 91 in [r[peak] for r in gpus[1:]]
    html = render_html(telemetry)
    assert html.count('<svg class="spark"') == 8  # one per GPU that reports counters
    assert 'id="licences"' in html and "All editions" in html
    root = ET.fromstring(render_junit(telemetry))
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["licences.total"] == "13"


def test_replay_with_another_window_is_refused(no_network: None) -> None:
    source = obtain.Replay(CASSETTES / "telemetry.yaml", telemetry_window=dt.timedelta(hours=1))
    with pytest.raises(cassette.CassetteError, match="does not hold"):
        obtain.obtain_inventory(source)


# -- plain data ---------------------------------------------------------------------------


def _counter(key: int, group: str, name: str, rollup: str, unit: str = "percent") -> Any:
    describe = vim.ElementDescription
    return vim.PerformanceManager.CounterInfo(
        key=key,
        nameInfo=describe(key=name, label=name, summary=name),
        groupInfo=describe(key=group, label=group, summary=group),
        unitInfo=describe(key=unit, label=unit, summary=unit),
        rollupType=rollup,
        statsType="absolute",
        level=2,
        perDeviceLevel=3,
    )


def test_resolve_counters_by_group_name_and_rollup() -> None:
    found = resolve_counters(
        [
            _counter(9, "cpu", "utilization", "average"),
            _counter(41, "gpu", "utilization", "maximum"),
            _counter(42, "gpu", "utilization", "average"),
            _counter(77, "gpu", "temperature", "average", "celsius"),
        ]
    )
    assert {f: c.key for f, c in found.items()} == {
        "utilization_percent": 42,
        "temperature_c": 77,
    }
    assert found["temperature_c"].unit == "celsius"
    assert found["utilization_percent"].per_device_level == 3


def _gpu(pci_id: str) -> Gpu:
    return Gpu(pci_id=pci_id, vendor_id=0x10DE, device_id=0x27B8)


def test_instances_match_by_pci_address_or_by_order() -> None:
    gpus = [_gpu("0000:5e:00.0"), _gpu("0000:3b:00.0")]
    # ESXi's three-digit form is decimal: bus 094 is bus 0x5e.
    matched, unmatched = match_instances(gpus, ["0000:3B:00.0", "000:094:00.0"])
    assert {i: (g.pci_id, how) for i, (g, how) in matched.items()} == {
        "0000:3B:00.0": ("0000:3b:00.0", "pci"),
        "000:094:00.0": ("0000:5e:00.0", "pci"),
    }
    matched, _ = match_instances(gpus, ["gpu0", "gpu1"])
    assert {i: g.pci_id for i, (g, _) in matched.items()} == {
        "gpu0": "0000:3b:00.0",
        "gpu1": "0000:5e:00.0",
    }
    matched, _ = match_instances(gpus, ["gpu-1", "gpu-2"])  # numbered from one
    assert {i: g.pci_id for i, (g, _) in matched.items()} == {
        "gpu-1": "0000:3b:00.0",
        "gpu-2": "0000:5e:00.0",
    }
    matched, unmatched = match_instances(gpus, ["gpu7", "nvidia-smi"])
    assert matched == {} and unmatched == ["gpu7", "nvidia-smi"]
    only, _ = match_instances([_gpu("0000:3b:00.0")], ["GPU-uuid-1"])
    assert [how for _, how in only.values()] == ["only"]


def test_interval_follows_the_window() -> None:
    intervals = [
        vim.HistoricalInterval(
            key=i, samplingPeriod=p, name=str(p), length=n, level=lv, enabled=True
        )
        for i, (p, n, lv) in enumerate(((300, 86400, 1), (1800, 604800, 2), (7200, 2592000, 3)))
    ]
    assert choose_interval(dt.timedelta(minutes=30), intervals) == (20, None)
    assert choose_interval(dt.timedelta(hours=24), intervals) == (300, 1)
    assert choose_interval(dt.timedelta(days=7), intervals) == (1800, 2)
    assert choose_interval(dt.timedelta(days=90), intervals) == (7200, 3)
    assert choose_interval(dt.timedelta(hours=24), []) == (300, None)


def test_licence_allowance_by_feature_name_key_or_edition() -> None:
    policy = LicensingPolicy()
    by_name = Licence(edition_key="esx.x", features={"graphics": "Shared Pass-Thru Graphics"})
    assert vgpu_allowance(by_name, policy)[0]
    assert not vgpu_allowance(
        Licence(edition_key="esx.x", features={"vmotion": "vMotion"}), policy
    )[0]
    assert vgpu_allowance(Licence(edition_key="esx.enterprisePlus.cpuPackage"), policy)[0]
    assert not vgpu_allowance(Licence(edition_key="esx.standard.cpuPackage"), policy)[0]
    custom = LicensingPolicy(vgpu_editions=("esx.vvf.*",))
    assert vgpu_allowance(Licence(edition_key="esx.vvf.cpuCore"), custom)[0]
    expired = Licence(edition_key="esx.enterprisePlus.cpuPackage", expires="2027-01-14")
    assert licence_problems(expired, policy, TODAY) == [("its licence expired on 2027-01-14", None)]
    assert licence_problems(None, policy, TODAY)


def test_telemetry_window_option() -> None:
    duration = Duration()
    assert duration.convert("90m", None, None) == dt.timedelta(minutes=90)
    assert duration.convert("7d", None, None) == dt.timedelta(days=7)
    assert duration.convert("24", None, None) == dt.timedelta(hours=24)
    for bad in ("soon", "0h", "2y"):
        with pytest.raises(click.BadParameter):
            duration.convert(bad, None, None)


def _interactions(name: str) -> list[dict[str, Any]]:
    return cassette.interactions(CASSETTES / f"{name}.yaml")


# -- live ---------------------------------------------------------------------------------


def _collect(lab: Any, record: Path | None = None) -> Inventory:
    if record is not None:
        from gpuaudit.vsphere.credentials import Credentials

        creds = Credentials(server=lab.url, user=lab.user, password=lab.password)
        return obtain.obtain_inventory(obtain.Live(credentials=creds, record=record))
    with connect.session(connect.parse_server(lab.url), lab.user, lab.password) as si:
        return collect(si, source=lab.url)


@pytest.mark.live
def test_queryperf_calls_stay_bounded_on_a_large_estate(lab_factory: Any, tmp_path: Path) -> None:
    from tests.lab.generate import generate

    scenario = generate(10, 20, 2, 200, telemetry_samples=12)  # 200 hosts
    lab = lab_factory(scenario)
    out = tmp_path / "large.yaml"
    inventory = _collect(lab, out)
    hosts = sum(1 for h in inventory.hosts if h.gpus and h.connected)
    assert hosts == 200
    calls = [cassette.soap_call(i["request"].get("body"))[0] for i in cassette.interactions(out)]
    # vCenter's default limit, 256 metrics, takes 51 hosts' five counters per call:
    # at most one call per 50 hosts.
    assert inventory.telemetry.metrics_per_query == DEFAULT_QUERY_METRICS
    assert calls.count("QueryPerf") == inventory.telemetry.queries == -(-hosts // 51)
    assert inventory.telemetry.queries <= -(-hosts // 50)
    reported = [h for h in inventory.hosts if h.telemetry and h.telemetry.status == "reported"]
    assert len(reported) == 80  # the vGPU clusters' hosts: 4 of 10 clusters


@pytest.mark.live
@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"statistics_level": 1}, "statistics level"),
        ({"gpu_counters": []}, "no GPU performance counters"),
    ],
)
def test_no_counters_is_data_not_a_crash(
    lab_factory: Any, change: dict[str, Any], reason: str
) -> None:
    scenario = load_scenario(SCENARIOS / "telemetry.yaml")
    scenario["vcenter"].update(change)
    inventory = _collect(lab_factory(scenario))
    assert reason in inventory.telemetry.note
    result = run_checks(inventory, None, TODAY)
    assert result.errors == []
    gpu_hosts = {h.name for h in inventory.hosts if h.gpus and h.connected}
    failed = {f.object for f in result.findings if f.rule == "MON-01" and f.status == "fail"}
    assert failed == gpu_hosts
    assert not [f for f in result.findings if f.rule in ("MON-02", "MON-03", "MON-04")]


def test_anonymized_cassette_hides_host_names_in_licence_assignments(
    tmp_path: Path, no_network: None
) -> None:
    from gpuaudit.vsphere.anonymize import anonymize_cassette

    copy = tmp_path / "telemetry.yaml"
    copy.write_text((CASSETTES / "telemetry.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    mapping = anonymize_cassette(copy)
    text = copy.read_text(encoding="utf-8")
    assert "<entityDisplayName>esx-" not in text
    inventory = obtain.obtain_inventory(obtain.Replay(copy))
    hot = next(h for h in inventory.hosts if h.name == mapping["esx-hot"])
    assert hot.licence is not None and hot.licence.evaluation


@pytest.mark.live
@pytest.mark.parametrize(("limit", "calls"), [(10, 10), (-1, 1)])
def test_queryperf_pages_follow_the_server_limit(
    lab_factory: Any, tmp_path: Path, limit: int, calls: int
) -> None:
    # maxQueryMetrics 10 allows two hosts' five counters per call; -1 lifts the limit.
    from tests.lab.generate import generate

    scenario = generate(1, 20, 2, 20, telemetry_samples=4)  # one cluster: vGPU
    scenario["vcenter"]["settings"][MAX_QUERY_METRICS] = limit
    lab = lab_factory(scenario)
    out = tmp_path / "limit.yaml"
    inventory = _collect(lab, out)
    asked = [cassette.soap_call(i["request"].get("body"))[0] for i in cassette.interactions(out)]
    assert asked.count("QueryPerf") == inventory.telemetry.queries == calls
    assert inventory.telemetry.metrics_per_query == (limit if limit > 0 else None)
    statuses = {h.telemetry.status for h in inventory.hosts if h.telemetry is not None}
    assert statuses == {"reported"}
    assert not [g for g in inventory.gaps if g.property == "gpu counters"]


@pytest.mark.live
def test_the_lab_refuses_a_query_over_its_limit(lab_factory: Any) -> None:
    # What makes the test above mean something: the lab, like vCenter, refuses more
    # metrics in one historical query than maxQueryMetrics allows.
    from tests.lab.generate import generate

    scenario = generate(1, 4, 1, 4, telemetry_samples=4)  # one cluster: vGPU
    scenario["vcenter"]["settings"][MAX_QUERY_METRICS] = 3
    lab = lab_factory(scenario)
    with connect.session(connect.parse_server(lab.url), lab.user, lab.password) as si:
        content = si.RetrieveContent()
        host = content.viewManager.CreateContainerView(
            content.rootFolder, [vim.HostSystem], True
        ).view[0]
        now = si.CurrentTime()

        def query(metrics: int) -> Any:
            spec = vim.PerformanceManager.QuerySpec(
                entity=host,
                startTime=now - dt.timedelta(hours=1),
                endTime=now,
                intervalId=300,
                metricId=[
                    vim.PerformanceManager.MetricId(counterId=1000 + i, instance="*")
                    for i in range(metrics)
                ],
            )
            return content.perfManager.QueryPerf(querySpec=[spec])

        query(3)
        with pytest.raises(vim.fault.RestrictedByAdministrator):
            query(4)


# -- QueryPerf paging, on plain data -------------------------------------------------------


class _PerfManager:
    """Answers QueryPerf with no values, and refuses more than ``limit`` metrics per call."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.sizes: list[int] = []
        self.answered: list[str] = []  # the hosts of each call answered, in no set order

    def QueryPerf(self, querySpec: list[Any]) -> list[Any]:
        self.sizes.append(len(querySpec))
        if sum(len(s.metricId) for s in querySpec) > self.limit:
            raise vim.fault.RestrictedByAdministrator(details="vpxd.stats.maxQueryMetrics")
        self.answered.extend(s.entity._moId for s in querySpec)
        return []


class _Setting:
    """content.setting: the limit's value, None (not set) or "denied" (NoPermission)."""

    def __init__(self, value: int | str | None) -> None:
        self.value = value

    def QueryOptions(self, name: str) -> list[Any]:
        if self.value is None:
            raise vim.fault.InvalidName(name=name)
        if self.value == "denied":
            raise vim.fault.NoPermission(privilegeId="System.Read")
        return [vim.option.OptionValue(key=name, value=self.value)]


def _paged(
    hosts: int, limit: int, setting: int | str | None, version: str = "8.0.3"
) -> tuple[Inventory, _PerfManager]:
    inv = Inventory()
    inv.vcenter.version = version
    inv.hosts = [
        Host(name=f"esx{i:03}", moref=f"host-{i}", gpus=[Gpu("0000:3b:00.0", 0x10DE, 0x27B8)])
        for i in range(hosts)
    ]
    perf = ManagerProps()
    perf.values["perfCounter"] = [
        vim.PerformanceManager.CounterInfo(
            key=100 + i,
            nameInfo=vim.ElementDescription(key=name, label=name, summary=name),
            groupInfo=vim.ElementDescription(key="gpu", label="GPU", summary="GPU"),
            unitInfo=vim.ElementDescription(key="percent", label="%", summary="%"),
            rollupType="average",
            statsType="absolute",
            level=4,
            perDeviceLevel=4,
        )
        for i, name in enumerate(
            ("utilization", "mem.used", "mem.usage", "temperature", "power.used")
        )
    ]
    manager = _PerfManager(limit)
    content = type("Content", (), {"perfManager": manager, "setting": _Setting(setting)})()
    si = type("Si", (), {"_stub": None})()
    now = dt.datetime(2026, 11, 30, tzinfo=dt.UTC)
    collect_telemetry(si, content, inv, perf, now)
    return inv, manager


def test_queryperf_batches_take_as_many_hosts_as_the_limit_allows() -> None:
    assert hosts_per_query(256, 5, 1000) == 51
    assert hosts_per_query(64, 5, 1000) == 12
    assert hosts_per_query(3, 5, 1000) == 1  # never zero hosts
    assert hosts_per_query(None, 5, 1000) == 1000
    inv, manager = _paged(120, limit=256, setting=None)  # no setting: vCenter's 256
    assert sorted(manager.sizes) == [18, 51, 51]  # asked side by side, in no set order
    assert inv.telemetry.queries == 3 and inv.telemetry.metrics_per_query == 256


def test_a_refused_batch_is_halved_until_the_server_takes_it() -> None:
    # The server counts more than the setting says (60 metrics, not 256): the
    # collector halves the batch until it is answered, and keeps that size.
    # Five counters a host: 60 metrics are 12 hosts. The queries in flight side by side
    # each get the same answer; the pages after a refusal are cut at half its size.
    inv, manager = _paged(100, limit=60, setting=None)
    assert manager.sizes[:2] == [51, 49] or manager.sizes[:2] == [49, 51]
    refused = [n for n in manager.sizes if n > 12]
    taken = [n for n in manager.sizes if n <= 12]
    assert sum(taken) == 100 and len(taken) >= 9  # at most 12 hosts an answered page
    assert sorted(manager.answered) == sorted(h.moref for h in inv.hosts)  # each host once
    assert sorted(refused, reverse=True)[:2] == [51, 49] and min(refused) >= 13
    assert len(refused) < len(taken)  # refusals halve: fewer of them than answers
    assert inv.telemetry.queries == len(manager.sizes)
    assert {h.telemetry.status for h in inv.hosts if h.telemetry} == {"none"}
    assert not inv.gaps


def test_a_host_refused_alone_is_a_gap_not_a_crash() -> None:
    inv, manager = _paged(3, limit=4, setting=64)  # five counters exceed 4 for even one host
    assert manager.sizes == [3, 1, 1, 1]
    assert {h.telemetry.status for h in inv.hosts if h.telemetry} == {"error"}
    assert [g.reason for g in inv.gaps] == ["RestrictedByAdministrator"] * 3


@pytest.mark.parametrize(
    ("setting", "version", "limit", "per_call"),
    [
        (None, "8.0.3", 256, 51),  # not set: vCenter 6.5 and later allow 256
        (None, "6.0.0", 64, 12),  # not set on 6.0: 64
        ("denied", "8.0.3", 256, 51),  # unreadable: the default, and no gap
        (20, "8.0.3", 20, 4),
        ("128", "8.0.3", 128, 25),  # set in the vSphere Client: a string
        (-1, "8.0.3", None, 60),  # no limit: every host in one call
    ],
)
def test_the_limit_comes_from_the_setting_or_the_version(
    setting: int | str | None, version: str, limit: int | None, per_call: int
) -> None:
    inv, manager = _paged(60, limit=10**6, setting=setting, version=version)
    assert inv.telemetry.metrics_per_query == limit
    assert manager.sizes[0] == per_call
    assert not inv.gaps
