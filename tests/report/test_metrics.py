"""-f openmetrics: the Prometheus text exposition, read back with prometheus_client's parser.

Every value is checked against the JSON report of the same demo scan, and every
metric the Grafana dashboard in docs queries must be in the output.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from prometheus_client.parser import text_string_to_metric_families

from gpuaudit.cli.main import main
from gpuaudit.report import load_json_report, render_metrics
from tests.conftest import ROOT

DASHBOARD = ROOT / "docs" / "grafana-dashboard.json"
SCHEDULING = ROOT / "docs" / "scheduling.md"
Samples = dict[str, dict[tuple[tuple[str, str], ...], float]]


def samples(text: str) -> Samples:
    found: Samples = defaultdict(dict)
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[sample.name][tuple(sorted(sample.labels.items()))] = sample.value
    return found


def value(found: Samples, name: str, **labels: str) -> float:
    return found[name][tuple(sorted({"vcenter": "demo", **labels}.items()))]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Samples, dict[str, Any], Path]:
    out = tmp_path_factory.mktemp("metrics")
    args = ["scan", "--demo", "-o", str(out), "-f", "openmetrics,json", "--no-history"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output  # the demo fails high findings
    (prom,) = out.glob("gpuaudit-demo-*.prom")  # node_exporter's textfile collector reads *.prom
    (report,) = out.glob("gpuaudit-demo-*.json")
    return samples(prom.read_text(encoding="utf-8")), json.loads(report.read_text()), report


def test_verdict_and_counts_match_the_json_report(
    demo: tuple[Samples, dict[str, Any], Path],
) -> None:
    found, report, _ = demo
    summary = report["summary"]
    assert summary["verdict"] == "fail"
    for verdict in ("pass", "unproven", "fail"):
        expected = 1.0 if verdict == summary["verdict"] else 0.0
        assert value(found, "gpuaudit_verdict", verdict=verdict) == expected
    # info is a notice: its own metric, never a failed finding
    assert {dict(k)["severity"] for k in found["gpuaudit_failed_findings"]} == {
        "critical",
        "high",
        "medium",
        "low",
    }
    for severity in ("critical", "high", "medium", "low"):
        expected = summary["failed_by_severity"][severity]
        assert value(found, "gpuaudit_failed_findings", severity=severity) == expected
    assert value(found, "gpuaudit_notices") == summary["notices"] > 0
    for severity, n in summary["unproven_by_severity"].items():
        assert value(found, "gpuaudit_unproven_findings", severity=severity) == n


def test_clusters_match_the_json_report(demo: tuple[Samples, dict[str, Any], Path]) -> None:
    found, report, _ = demo
    # tests/scenarios/demo.yaml: three GPU clusters
    assert {s["cluster"] for s in report["simulations"]} == {
        "edge-inference",
        "ml-iscsi",
        "vdi-vgpu",
    }
    for sim in report["simulations"]:
        cluster = sim["cluster"]
        proven = value(found, "gpuaudit_cluster_tolerated_host_failures", cluster=cluster)
        assert proven == sim["tolerates"]
        upper = sim["tolerates_unproven"]
        assert value(
            found, "gpuaudit_cluster_tolerated_host_failures_not_proven", cluster=cluster
        ) == (sim["tolerates"] if upper is None else upper)
        free: dict[str, int] = defaultdict(int)
        total: dict[str, int] = defaultdict(int)
        for gpu in sim["capacity"]:
            free[gpu["model"]] += gpu["capacity"] - gpu["used"]
            total[gpu["model"]] += gpu["capacity"]
        assert free
        for model in free:
            labels = {"cluster": cluster, "model": model}
            assert value(found, "gpuaudit_free_gpu_slots", **labels) == free[model]
            assert value(found, "gpuaudit_gpu_slots", **labels) == total[model]


def test_times(demo: tuple[Samples, dict[str, Any], Path]) -> None:
    found, report, path = demo
    checked = report["source"]["checked_at"].replace("Z", "+00:00")
    from datetime import datetime

    expected = datetime.fromisoformat(checked).timestamp()
    assert value(found, "gpuaudit_last_success_timestamp_seconds") == expected
    assert 0 < value(found, "gpuaudit_scan_duration_seconds") < 600
    # A report rendered again later does not know how long its scan took.
    again = samples(render_metrics(load_json_report(path)).decode())
    assert "gpuaudit_scan_duration_seconds" not in again
    assert value(again, "gpuaudit_last_success_timestamp_seconds") == expected


def dashboard_queries() -> list[str]:
    doc = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    queries = [t["expr"] for p in doc["panels"] for t in p["targets"]]
    for variable in doc["templating"]["list"]:
        if variable["type"] == "query":
            queries.append(variable["query"]["query"])
    return queries


def test_every_metric_the_dashboard_queries_is_written(
    demo: tuple[Samples, dict[str, Any], Path],
) -> None:
    found, _, _ = demo
    queries = dashboard_queries()
    assert len(queries) >= 9
    named = {m for q in queries for m in re.findall(r"\bgpuaudit_[a-z_]+\b", q)}
    assert len(named) >= 9
    missing = sorted(named - set(found))
    assert not missing, f"the dashboard queries metrics gpuaudit does not write: {missing}"


def test_every_metric_the_documented_alerts_name_is_written(
    demo: tuple[Samples, dict[str, Any], Path],
) -> None:
    found, _, _ = demo
    text = SCHEDULING.read_text(encoding="utf-8")
    section = text[text.index("## Monitoring the job") :]
    section = section[: section.index("\n## ", 1)]
    named = set(re.findall(r"\bgpuaudit_[a-z_]+\b", section))
    assert len(named) >= 3
    assert named <= set(found)


def test_cli_help_lists_the_format() -> None:
    result = CliRunner().invoke(main, ["scan", "--help"], terminal_width=200)
    assert "openmetrics" in result.output
