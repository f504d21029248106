"""SARIF 2.1.0: failed findings as results, for tools that ingest SARIF.

Rules go in tool.driver.rules (help: the remediation and the rule's references;
helpUri: its first reference); a result's level follows its severity; its
location is a logicalLocation naming the vSphere object. Waived findings are
results too, each with an external suppression that carries the waiver, so that
a consumer that honours suppressions hides them.
"""

from __future__ import annotations

from typing import Any

import gpuaudit
from gpuaudit.report.actions import finding_id
from gpuaudit.report.licences import licence_summary
from gpuaudit.report.summary import parse_time
from gpuaudit.results import AuditResult, Finding, Rule

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {"critical": "error", "high": "error", "medium": "warning", "low": "note", "info": "note"}
# GitHub code scanning reads this property to rank security results.
SECURITY_SEVERITY = {"critical": "9.5", "high": "8.0", "medium": "5.5", "low": "3.0", "info": "0.0"}


def _help(rule: Rule) -> dict[str, str]:
    """The remediation, then every reference: as plain text and as Markdown links."""
    text = rule.remediation or rule.title
    if not rule.references:
        return {"text": text}
    lines = "\n".join(f"- {ref.title}: {ref.url}" for ref in rule.references)
    links = "\n".join(f"- [{ref.title}]({ref.url})" for ref in rule.references)
    return {
        "text": f"{text}\n\nReferences:\n{lines}",
        "markdown": f"{text}\n\n**References**\n\n{links}",
    }


def _rule(rule: Rule) -> dict[str, Any]:
    descriptor: dict[str, Any] = {
        "id": rule.id,
        "name": rule.id.replace("-", ""),
        "shortDescription": {"text": rule.title},
        "fullDescription": {"text": rule.rationale or rule.title},
        "help": _help(rule),
        "defaultConfiguration": {"level": LEVELS.get(rule.severity, "warning")},
        "properties": {
            "category": rule.category,
            "severity": rule.severity,
            "object_kind": rule.object_kind,
            "tags": ["vsphere", "gpu", rule.category],
            "security-severity": SECURITY_SEVERITY.get(rule.severity, "5.5"),
        },
    }
    if rule.references:
        descriptor["helpUri"] = rule.references[0].url
    return descriptor


def _qualified(f: Finding, datacenter: str) -> str:
    parts = [p for p in (datacenter, f.cluster, f.host) if p]
    if not parts or parts[-1] != f.object:
        parts.append(f.object)
    return "/".join(parts)


def _result(f: Finding, index: int | None, datacenter: str) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": f.rule,
        "level": LEVELS.get(f.severity, "warning"),
        "message": {"text": f.message or f.rule},
        "locations": [
            {
                "logicalLocations": [
                    {
                        "name": f.object,
                        "fullyQualifiedName": _qualified(f, datacenter),
                        "kind": f.object_kind,
                    }
                ]
            }
        ],
        "partialFingerprints": {"gpuaudit/v1": finding_id(f)},
        "properties": {
            "severity": f.severity,
            "status": f.status,
            "cluster": f.cluster,
            "host": f.host,
            "evidence": f.evidence,
        },
    }
    if index is not None:
        result["ruleIndex"] = index
    if f.status == "waived":
        w = f.waiver
        suppression: dict[str, Any] = {"kind": "external", "status": "accepted"}
        if w:
            suppression["justification"] = f"{w.reason} ({w.owner}, until {w.expires})"
            suppression["properties"] = {"owner": w.owner, "expires": w.expires}
        result["suppressions"] = [suppression]
    return result


def render_sarif(result: AuditResult) -> dict[str, Any]:
    index = {r.id: i for i, r in enumerate(result.rules)}
    inv = result.inventory
    datacenters = {c.name: c.datacenter for c in inv.clusters}
    datacenters.update({h.name: h.datacenter for h in inv.hosts if not h.cluster})
    results = [
        _result(f, index.get(f.rule), datacenters.get(f.cluster or f.host or "", ""))
        for f in result.findings
        if f.status in ("fail", "waived")
    ]
    invocation: dict[str, Any] = {
        "executionSuccessful": not result.errors,
        "toolExecutionNotifications": [
            {"level": "error", "message": {"text": f"rule {e.rule} raised: {e.error}"}}
            for e in result.errors
        ],
    }
    checked = parse_time(result.checked_at)
    if checked:
        invocation["endTimeUtc"] = checked.strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "gpuaudit",
                        "version": result.tool_version or gpuaudit.__version__,
                        "semanticVersion": gpuaudit.__version__,
                        "rules": [_rule(r) for r in result.rules],
                        "properties": {"rules_version": result.rules_version},
                    }
                },
                "invocations": [invocation],
                "results": results,
                "properties": {
                    "source": inv.source,
                    "vcenter": inv.vcenter.name,
                    "licences": licence_summary(inv, result.findings).to_dict(),
                },
            }
        ],
    }
