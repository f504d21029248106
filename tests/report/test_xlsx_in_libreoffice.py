"""The workbook as LibreOffice reads it: every sheet's CSV matches the report's data.

LibreOffice (libreoffice-calc, headless) converts each sheet to CSV. The expected
cells are built here from the JSON report's inventory, findings and simulations,
and each sheet's columns from docs/report-formats.md, never from the code that
writes the workbook. A name that a spreadsheet would take for a formula must come
back as the same text: had LibreOffice evaluated "+1+1" the CSV would hold 2.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest

from gpuaudit.report import load_json_report, write_reports
from gpuaudit.results import AuditResult
from tests.conftest import ROOT
from tests.support.report_fixtures import HOSTILE, hostile_result, realistic_result
from tests.support.report_tools import xlsx_to_csv

pytestmark = pytest.mark.office

# Characters XML 1.0 forbids; the workbook shows each as \xNN (or \uNNNN).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_CELL_LIMIT = 32767  # characters in one Excel cell


def shown(text: str) -> str:
    """How a cell shows a name: XML-forbidden characters visible, cut to a cell's limit."""
    text = _NOT_XML.sub(
        lambda m: (
            f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}"
        ),
        text,
    )
    return text if len(text) <= _CELL_LIMIT else text[: _CELL_LIMIT - 1] + "\u2026"


def as_csv(value: Any) -> str:
    """How LibreOffice writes a cell's value to CSV."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        return value.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, float):
        return f"{value:.10g}"
    if isinstance(value, int):
        return str(value)
    return shown(value)


def documented_columns() -> dict[str, list[str]]:
    """Sheet title -> column names, as docs/report-formats.md lists them."""
    doc = (ROOT / "docs" / "report-formats.md").read_text(encoding="utf-8")
    columns = {}
    for title, names in re.findall(r"^- \*\*(.+?)\*\*: (.+)$", doc, re.MULTILINE):
        columns[title] = [
            re.sub(r" \((int|float|bool|date|datetime)\)$", "", n) for n in names.split(", ")
        ]
    return columns


def named(objects: Iterable[str], most: int = 20) -> str:
    """Top Actions names at most twenty objects; the rest are on Action Findings
    (docs/report-formats.md)."""
    listed = list(objects)
    more = f" and {len(listed) - most} more (Action Findings)" if len(listed) > most else ""
    return ", ".join(listed[:most]) + more


def _joined(values: list[Any]) -> str:
    return ", ".join(v for v in values if v)


def _date_or_text(text: str | None) -> date | str | None:
    if not text:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        return text


def _gpu_models(host: dict[str, Any]) -> str:
    counts: dict[str, int] = {}
    for g in host["gpus"]:
        name = g["model"] or g["device_name"]
        counts[name] = counts.get(name, 0) + 1
    return ", ".join(f"{n}x {name}" for name, n in counts.items())


def _vgpu_vmotion(vm: dict[str, Any]) -> bool | None:
    flags = [a["migrate_supported"] for a in vm["gpus"] if a["kind"] == "vgpu"]
    return None if not flags or None in flags else all(flags)


_COUNTERS = (
    "utilization_percent",
    "memory_used_mb",
    "memory_usage_percent",
    "temperature_c",
    "power_w",
)


def _telemetry(gpu: dict[str, Any]) -> list[Any]:
    tel = gpu.get("telemetry") or {}
    out = []
    for counter in _COUNTERS:
        stats = tel.get(counter) or {}
        out += [stats.get("average"), stats.get("peak")]
    return out


def stable_id(finding: dict[str, Any]) -> str:
    """The SARIF fingerprint: SHA-256 of rule, object kind and object, NUL-separated."""
    key = "\0".join((finding["rule"], finding["object_kind"], finding["object"]))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def evidence_text(evidence: dict[str, Any]) -> str:
    """Evidence as docs/report-formats.md describes it: sorted ``key: value`` lines."""
    lines: list[str] = []

    def scalar(value: Any) -> str:
        if value is None:
            return "(none)"
        if isinstance(value, bool):
            return "yes" if value else "no"
        return str(value)

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            if not value:
                lines.append(f"{prefix}: (none)")
            for key in sorted(value):
                walk(f"{prefix}.{key}" if prefix else key, value[key])
        elif isinstance(value, list) and any(isinstance(i, (dict, list)) for i in value):
            for index, item in enumerate(value):
                walk(f"{prefix}.{index}", item)
        elif isinstance(value, list):
            lines.append(f"{prefix}: {', '.join(scalar(i) for i in value) or '(none)'}")
        else:
            lines.append(f"{prefix}: {scalar(value)}")

    if evidence:
        walk("", evidence)
    return "\n".join(lines)


def expected_sheets(doc: dict[str, Any]) -> dict[str, list[list[Any]]]:
    """The rows of the sheets that list the report's records, from the JSON document."""
    inv = doc["inventory"]
    hosts = inv["hosts"]
    rules = {r["id"]: r for r in doc["rules"]}
    slots = {(s["host"], s["pci_id"]): s for sim in doc["simulations"] for s in sim["capacity"]}
    sheets: dict[str, list[list[Any]]] = {}
    server = inv["source"]
    uuid = inv["vcenter"]["instance_uuid"]
    morefs = {h["name"]: h["moref"] for h in hosts}

    def by_host(name: str) -> list[Any]:
        return [server, uuid, morefs[name]]

    # docs/report-formats.md: a finding's MoRef ID and Type are the managed object it
    # joins to on the Clusters, Hosts, VMs and Datastores sheets; a GPU's is its host's.
    joined = {
        "cluster": ({c["name"]: c["moref"] for c in inv["clusters"]}, "ClusterComputeResource"),
        "host": (morefs, "HostSystem"),
        "vm": ({v["name"]: v["moref"] for v in inv["vms"]}, "VirtualMachine"),
        "datastore": ({d["name"]: d["moref"] for d in inv["datastores"]}, "Datastore"),
    }

    def moref(f: dict[str, Any]) -> list[Any]:
        kind, name = f["object_kind"], f["object"]
        if kind == "gpu":
            kind, name = "host", f["host"] or name.rsplit("/", 1)[0]
        ids, vsphere_type = joined.get(kind, ({}, None))
        return [ids[name], vsphere_type] if name in ids else [None, None]

    # Failed, not proven, notices (failed info findings), waived, passed; then
    # severity, rule and object.
    statuses = ["fail", "unproven", "notice", "waived", "pass"]
    severities = ["critical", "high", "medium", "low", "info"]

    def shown(f: dict[str, Any]) -> str:
        return "notice" if f["status"] == "fail" and f["severity"] == "info" else f["status"]

    ordered = sorted(
        doc["findings"],
        key=lambda f: (
            statuses.index(shown(f)),
            severities.index(f["severity"]),
            f["rule"],
            f["object"],
        ),
    )

    aged = any("age_days" in f for f in doc["findings"])
    sheets["Findings"] = [
        [
            stable_id(f)[:12],
            f["severity"],
            shown(f),
            f["rule"],
            f["object"],
            f["cluster"],
            rules.get(f["rule"], {}).get("title"),
            rules.get(f["rule"], {}).get("category"),
            f["object_kind"],
            f["host"],
            f["message"],
            evidence_text(f["evidence"]),
            rules.get(f["rule"], {}).get("remediation"),
            *(
                [f["waiver"]["reason"], f["waiver"]["owner"], _date_or_text(f["waiver"]["expires"])]
                if f["waiver"]
                else [None, None, None]
            ),
            "\n".join(
                f"{ref['title']}: {ref['url']}"
                for ref in rules.get(f["rule"], {}).get("references", [])
            ),
            severities.index(f["severity"]) + 1,
            *moref(f),
            _date_or_text((f.get("first_seen") or "")[:10]),
            server,
            uuid,
            stable_id(f),
            *([f.get("age_days")] if aged else []),
        ]
        for f in ordered
    ]
    sheets["Hosts"] = [
        [
            server,
            uuid,
            h["moref"],
            h["name"],
            h["cluster"],
            h["datacenter"],
            h["version"],
            h["build"],
            h["vendor"],
            h["model"],
            h["connection_state"],
            h["in_maintenance"],
            h["cpu_cores"],
            h["cpu_mhz"],
            h["memory_mb"],
            len(h["gpus"]),
            _gpu_models(h),
            h["default_graphics_type"],
            h["assignment_policy"],
            len(h["vgpu_profiles"]),
            len(h["vmotion_nics"]),
            sum(1 for a in h["adapters"] if a["kind"] in ("fc", "fcoe", "iscsi")),
        ]
        for h in hosts
    ]
    gpu_rows = []
    for h in hosts:
        for g in h["gpus"]:
            s = slots.get((h["name"], g["pci_id"]))
            use = (
                [
                    s["mode"],
                    s["profile"],
                    s["capacity"],
                    s["used"],
                    max(s["capacity"] - s["used"], 0),
                ]
                if s
                else [None] * 5
            )
            gpu_rows.append(
                [
                    *by_host(h["name"]),
                    h["name"],
                    h["cluster"],
                    g["pci_id"],
                    g["vendor_name"],
                    g["model"],
                    g["known_model"],
                    g["device_name"],
                    f"0x{g['vendor_id']:04x}",
                    f"0x{g['device_id']:04x}",
                    g["memory_mb"],
                    g["graphics_type"],
                    g["vgpu_mode"],
                    g["passthrough_capable"],
                    g["passthrough_enabled"],
                    g["passthrough_active"],
                    *use,
                    _joined(g["vms"]),
                    *_telemetry(g),
                ]
            )
    sheets["GPUs"] = gpu_rows
    sheets["vGPU Profiles"] = [
        [
            *by_host(h["name"]),
            h["name"],
            h["cluster"],
            p["name"],
            p["migrate_supported"],
            p["suspend_supported"],
        ]
        for h in hosts
        for p in h["vgpu_profiles"]
    ]
    sheets["VMs"] = [
        [
            server,
            uuid,
            v["moref"],
            v.get("bios_uuid", ""),
            v.get("instance_uuid", ""),
            v["name"],
            v["power_state"],
            v["host"],
            v["cluster"],
            v["datacenter"],
            v["memory_mb"],
            v["memory_reservation_mb"],
            v["memory_locked_to_max"],
            v["restart_priority"],
            len(v["gpus"]),
            _joined(sorted({a["kind"] for a in v["gpus"]})),
            _joined([a["profile"] for a in v["gpus"]]),
            _joined([a["pci_id"] for a in v["gpus"]]),
            _vgpu_vmotion(v),
            _joined(v["datastores"]),
        ]
        for v in inv["vms"]
    ]
    sheets["Datastores"] = [
        [
            server,
            uuid,
            d["moref"],
            d["name"],
            d["datacenter"],
            d["type"],
            d["transport"],
            d["capacity_mb"],
            d["free_mb"],
            round(100.0 * d["free_mb"] / d["capacity_mb"], 1) if d["capacity_mb"] else None,
            d["multiple_host_access"],
            d["local"],
            sum(1 for m in d["mounts"] if m["mounted"]),
            sum(1 for m in d["mounts"] if not m["accessible"]),
            sum(1 for m in d["mounts"] for p in m["paths"] if p["state"] == "dead"),
            _joined([m["host"] for m in d["mounts"]]),
            _joined(d["luns"]),
        ]
        for d in inv["datastores"]
    ]
    sheets["Adapters"] = [
        [
            *by_host(h["name"]),
            h["name"],
            h["cluster"],
            a["device"],
            a["kind"],
            a["model"],
            a["driver"],
            a["status"],
            a["port_wwn"],
            a["node_wwn"],
            a["iscsi_software"],
        ]
        for h in hosts
        for a in h["adapters"]
    ]
    sheets["vMotion Network"] = [
        [
            *by_host(h["name"]),
            h["name"],
            h["cluster"],
            n["device"],
            n["ip"],
            n["portgroup"],
            n["uplink_speed_mbps"],
        ]
        for h in hosts
        for n in h["vmotion_nics"]
    ]
    sheets["Failover Simulation"] = [
        [
            server,
            uuid,
            sim["cluster"],
            sim["hosts"],
            f["host"],
            f["host"] == sim["worst_host"],
            f["displaced"],
            len(f["placed"]),
            len(f["unplaced"]),
            "; ".join(
                f"{p['vm']} ({p['reason']})" if p["reason"] else p["vm"] for p in f["unplaced"]
            ),
            len(f["manual_only"]),
            "; ".join(
                f"{p['vm']} ({p['reason']})" if p["reason"] else p["vm"] for p in f["manual_only"]
            ),
            len(f["unproven"]),
            "; ".join(
                f"{p['vm']} ({p['reason']})" if p["reason"] else p["vm"] for p in f["unproven"]
            ),
            n_plus_k(sim["tolerates"], sim.get("tolerates_unproven")),
        ]
        for sim in doc["simulations"]
        for f in sim["failures"]
    ]
    sheets["Host Licences"] = [
        [
            *by_host(h["name"]),
            h["name"],
            h["cluster"],
            *(
                [
                    lic["edition_key"],
                    lic["name"],
                    lic["key_tail"],
                    _date_or_text(lic["expires"]),
                    lic["evaluation"],
                    _joined(sorted(lic["features"])),
                ]
                if (lic := h["licence"])
                else [None] * 6
            ),
            (h["telemetry"] or {}).get("status"),
            (h["telemetry"] or {}).get("reason"),
        ]
        for h in hosts
    ]
    severity_rank = {s: i for i, s in enumerate(SEVERITIES)}
    failed: dict[str, list[dict[str, Any]]] = {}
    for f in doc["findings"]:
        if f["status"] == "fail":
            failed.setdefault(f["rule"], []).append(f)
    for group in failed.values():
        group.sort(key=lambda f: (severity_rank[f["severity"]], f["cluster"] or "", f["object"]))
    order = sorted(
        failed, key=lambda r: (severity_rank[failed[r][0]["severity"]], -len(failed[r]), r)
    )
    sheets["Top Actions"] = [
        [
            rank,
            failed[rule][0]["severity"],
            rule,
            rules[rule]["title"],
            len(failed[rule]),
            ", ".join(
                c or "(no cluster)" for c in sorted({f["cluster"] or "" for f in failed[rule]})
            ),
            named(f["object"] for f in failed[rule]),
            rules[rule]["remediation"],
        ]
        for rank, rule in enumerate(order, start=1)
    ]
    sheets["GPU Capacity"] = [
        [
            sim["cluster"],
            sim["worst_host"],
            len(sim["capacity"]),
            len(sim["after_worst"]) if sim["worst_host"] else None,
            sum(s["capacity"] for s in sim["capacity"]),
            sum(s["capacity"] for s in sim["after_worst"]) if sim["worst_host"] else None,
            sum(max(s["capacity"] - s["used"], 0) for s in sim["capacity"]),
            sum(max(s["capacity"] - s["used"], 0) for s in sim["after_worst"])
            if sim["worst_host"]
            else None,
        ]
        for sim in doc["simulations"]
        if sim["capacity"]
    ]
    sheets["Data Gaps"] = [
        [server, uuid, g["object"], g["kind"], g["property"], g["reason"], g["moref"]]
        for g in inv["gaps"]
    ]
    return sheets


def n_plus_k(k: int | None, unproven: int | None) -> str:
    """The N+k cell as docs/report-formats.md describes it."""
    if k is None:
        return "\u2013"
    if unproven is not None and unproven > k:
        return f"N+{k} (up to N+{unproven} not proven)"
    return f"N+{k}"


def assert_sheets_match(doc: dict[str, Any], sheets: dict[str, list[list[str]]]) -> None:
    columns = documented_columns()
    # docs/report-formats.md: "Maintenance is there only where a cluster runs GPU VMs".
    runs_gpu_vms = any(vm.get("gpus") for vm in doc["inventory"]["vms"])
    if "Maintenance" not in sheets and not (runs_gpu_vms and doc.get("maintenance")):
        columns.pop("Maintenance", None)
    assert sorted(sheets) == sorted(columns)
    for title, names in columns.items():
        assert sheets[title][0] == names, title
    for title, rows in expected_sheets(doc).items():
        got = sheets[title][1:]
        want = [[as_csv(v) for v in row] for row in rows]
        assert len(got) == len(want), title
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            assert g == w, f"{title} row {i + 2}"


def convert(result: AuditResult, folder: Path) -> tuple[dict[str, Any], AuditResult, dict]:
    xlsx, json_path = write_reports(result, folder, ["xlsx", "json"], result.inventory.source)
    doc = json.loads(json_path.read_text(encoding="utf-8"))
    return doc, load_json_report(json_path), xlsx_to_csv(xlsx, folder / "csv")


BUILDERS: dict[str, Callable[[], AuditResult]] = {
    "realistic": realistic_result,
    "hostile": hostile_result,
}


@pytest.fixture(scope="module")
def conversions(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple]:
    return {
        name: convert(build(), tmp_path_factory.mktemp(name)) for name, build in BUILDERS.items()
    }


@pytest.fixture(params=sorted(BUILDERS))
def converted(request: pytest.FixtureRequest, conversions: dict[str, tuple]) -> tuple:
    return (request.param, *conversions[request.param])


def test_every_sheet_matches_the_report_data(converted: tuple) -> None:
    _name, doc, _loaded, sheets = converted
    assert_sheets_match(doc, sheets)


def _sheet(sheets: dict, title: str) -> list[dict[str, str]]:
    head, *rows = sheets[title]
    return [dict(zip(head, row, strict=True)) for row in rows]


SEVERITIES = ("critical", "high", "medium", "low", "info")


def assert_summary_sheets_match(doc: dict[str, Any], sheets: dict[str, list[list[str]]]) -> None:
    """Summary, Clusters and About, counted here from the findings, inventory and simulations."""
    inv, findings = doc["inventory"], doc["findings"]
    # An info finding that fails is a notice, never a failed finding.
    failed = [f for f in findings if f["status"] == "fail" and f["severity"] != "info"]
    category = {r["id"]: r["category"] for r in doc["rules"]}
    summary = {(r["Section"], r["Item"]): r["Value"] for r in _sheet(sheets, "Summary")}
    assert summary[("Verdict", "Verdict")] == ("FAIL" if failed else "PASS")
    worst = next((s for s in SEVERITIES if any(f["severity"] == s for f in failed)), "")
    assert summary[("Verdict", "Worst severity")] == worst
    assert summary[("Results", "Failed")] == str(len(failed))
    for status, item in (("waived", "Waived"), ("pass", "Passed")):
        assert summary[("Results", item)] == str(sum(f["status"] == status for f in findings))
    for severity in SEVERITIES[:-1]:  # info has its own row: notices
        n = sum(f["severity"] == severity for f in failed)
        assert summary[("Failed by severity", severity)] == str(n), severity
    for name in {category[f["rule"]] for f in failed}:
        n = sum(category[f["rule"]] == name for f in failed)
        assert summary[("Failed by category", name)] == str(n), name
    counts = {
        "Clusters": len(inv["clusters"]),
        "Hosts": len(inv["hosts"]),
        "GPUs": sum(len(h["gpus"]) for h in inv["hosts"]),
        "VMs": len(inv["vms"]),
        "GPU VMs": sum(1 for v in inv["vms"] if v["gpus"]),
        "Datastores": len(inv["datastores"]),
    }
    for item, n in counts.items():
        assert summary[("Inventory", item)] == str(n), item
    beyond_role = sum(1 for g in inv["gaps"] if g.get("privilege"))
    # Every row of the Data Gaps sheet, those beyond the Read-only role counted below.
    assert summary[("Data", "Data gaps")] == str(len(inv["gaps"]))
    assert summary[("Data", "Not read by the Read-only role")] == str(beyond_role)
    assert summary[("Data", "Rule errors")] == str(len(doc["errors"]))
    scanned = datetime.fromisoformat(inv["collected_at"].replace("Z", "+00:00"))
    assert summary[("Estate", "Scanned (UTC)")] == as_csv(scanned)
    tolerates = {sim["cluster"]: sim["tolerates"] for sim in doc["simulations"]}
    for sim in doc["simulations"]:
        assert summary[("Cluster N+k", shown(sim["cluster"]))] == n_plus_k(
            sim["tolerates"], sim.get("tolerates_unproven")
        )
    clusters = {r["Cluster"]: r for r in _sheet(sheets, "Clusters")}
    assert sorted(clusters) == sorted(shown(c["name"]) for c in inv["clusters"])
    for c in inv["clusters"]:
        row = clusters[shown(c["name"])]
        assert row["HA"] == as_csv(c["ha_enabled"])
        assert row["# Hosts"] == str(sum(h["cluster"] == c["name"] for h in inv["hosts"]))
        assert row["Tolerates"] == as_csv(tolerates.get(c["name"]))
        assert row["Failed"] == str(sum(f["cluster"] == c["name"] for f in failed))
        assert row["vCenter"] == shown(inv["source"]) and row["MoRef ID"] == c["moref"]
        for severity in SEVERITIES:  # the Info column counts the cluster's notices
            of = failed if severity != "info" else [f for f in findings if f["status"] == "fail"]
            n = sum(f["cluster"] == c["name"] and f["severity"] == severity for f in of)
            assert row[severity.capitalize()] == str(n), (c["name"], severity)
    about = {r["Item"]: r["Value"] for r in _sheet(sheets, "About")}
    assert about["Tool Version"] == doc["generator"]["version"]
    assert about["Rules Version"] == doc["rules_version"]
    assert about["Report Schema"] == str(doc["report_schema_version"])
    assert about["Rules"] == str(len(doc["rules"]))
    assert about["Waivers Applied"] == str(sum(f["status"] == "waived" for f in findings))


def test_summary_clusters_and_about_from_the_report_data(converted: tuple) -> None:
    _name, doc, _loaded, sheets = converted
    assert_summary_sheets_match(doc, sheets)


def test_libreoffice_does_not_evaluate_names(conversions: dict[str, tuple]) -> None:
    _doc, _loaded, sheets = conversions["hostile"]
    vms = [r["VM"] for r in _sheet(sheets, "VMs")]
    for key in ("vdi1", "vdi2", "vdi3", "vdi4", "vdi5", "vdi6", "vdi7", "vdi10"):
        assert HOSTILE[key] in vms, repr(HOSTILE[key])
    assert "2" not in vms and "1" not in vms
    datastores = [r["Datastore"] for r in _sheet(sheets, "Datastores")]
    assert HOSTILE["ds_nfs"] in datastores
    hosts = [r["Host"] for r in _sheet(sheets, "Hosts")]
    assert HOSTILE["p2"] in hosts
