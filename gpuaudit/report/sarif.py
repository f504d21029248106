"""SARIF 2.1.0: failed findings as results, for tools that ingest SARIF.

Rules go in tool.driver.rules (help: the remediation and the rule's references;
helpUri: its first reference); a result's level follows its severity. Its
location names the vSphere object twice: a logicalLocation, and a
physicalLocation whose artifact is a relative path under the ``VCENTER`` base
(``vsphere/DATACENTER/CLUSTER/HOST/OBJECT``), because GitHub code scanning drops
a result without an artifact URI and accepts only relative paths. Waived
findings are results too, each with an external suppression that carries the
waiver, so that a consumer that honours suppressions hides them. A finding not
proven is a result of kind "open" (SARIF: the tool could not determine whether it
passes or fails), whose level is therefore "none"; its severity stays in its
properties and the reason in its message.

With a baseline every result carries its baselineState (SARIF 2.1.0, 3.27.24):
"new" when the finding was not open in the baseline, "unchanged" when it was (a
waived finding is a result too: "unchanged" when the baseline held it open). A
finding open in the baseline and no longer a result at all is a result of kind
"pass", level "none", state "absent". An info finding is level "note": a notice.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import gpuaudit
from gpuaudit.report.actions import finding_id
from gpuaudit.report.age import finding_age
from gpuaudit.report.licences import licence_summary
from gpuaudit.report.summary import parse_time
from gpuaudit.results import AuditResult, Finding, Judgement, Rule, baseline_key
from gpuaudit.verdict.judgement import judgement_of

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {"critical": "error", "high": "error", "medium": "warning", "low": "note", "info": "note"}
# GitHub code scanning reads this property to rank security results.
SECURITY_SEVERITY = {"critical": "9.5", "high": "8.0", "medium": "5.5", "low": "3.0", "info": "0.0"}
# The URI base id of every result's artifact: the vCenter's inventory, not a file tree.
URI_BASE_ID = "VCENTER"


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
            # SARIF wants the tags unique: the gpu category is already a tag.
            "tags": list(dict.fromkeys(["vsphere", "gpu", rule.category])),
            "security-severity": SECURITY_SEVERITY.get(rule.severity, "5.5"),
        },
    }
    if rule.references:
        descriptor["helpUri"] = rule.references[0].url
    return descriptor


def _path(f: Finding, datacenter: str) -> list[str]:
    """Datacenter, cluster, host and object, the empty ones left out."""
    parts = [p for p in (datacenter, f.cluster, f.host) if p]
    if not parts or parts[-1] != f.object:
        parts.append(f.object)
    return parts


def _segment(name: str) -> str:
    """A name as one URI path segment: percent-encoded, "/" included, never "." or ".."."""
    if name in (".", ".."):
        return name.replace(".", "%2E")
    return quote(name, safe="", errors="backslashreplace")


def artifact_uri(f: Finding, datacenter: str) -> str:
    """The finding's object as a relative URI: ``vsphere/DATACENTER/CLUSTER/HOST/OBJECT``."""
    return "/".join(["vsphere", *(_segment(p) for p in _path(f, datacenter))])


def _result(f: Finding, index: int | None, datacenter: str) -> dict[str, Any]:
    result: dict[str, Any] = {"ruleId": f.rule}
    if _not_proven(f):
        # SARIF 2.1.0, 3.27.10: a result whose kind is not "fail" has level "none".
        reason = f.evidence.get("not_proven") or "a fact it needs is not known exactly"
        result["kind"] = "open"
        result["level"] = "none"
        result["message"] = {"text": f"Not proven: {reason}. {f.message or f.rule}"}
    else:
        result["level"] = LEVELS.get(f.severity, "warning")
        result["message"] = {"text": f.message or f.rule}
    result["locations"] = [
        {
            "physicalLocation": {
                "artifactLocation": {
                    "uri": artifact_uri(f, datacenter),
                    "uriBaseId": URI_BASE_ID,
                }
            },
            "logicalLocations": [
                {
                    "name": f.object,
                    "fullyQualifiedName": "/".join(_path(f, datacenter)),
                    "kind": f.object_kind,
                }
            ],
        }
    ]
    result["partialFingerprints"] = {"gpuaudit/v1": finding_id(f)}
    result["properties"] = {
        "severity": f.severity,
        "status": f.status,
        "cluster": f.cluster,
        "host": f.host,
        "evidence": f.evidence,
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


def _state(judgement: Judgement, f: Finding) -> str:
    """An open finding's state; a waived one is still a result (suppressed): unchanged
    when the baseline held it open, else new."""
    state = judgement.state(f)
    if state is not None:
        return state
    was_open = (judgement.states or {}).get(baseline_key(f.rule, f.object)) == "absent"
    return "unchanged" if was_open else "new"


def _absent(rule: str, obj: str, index: int | None) -> dict[str, Any]:
    """A finding open in the baseline and open no more (passed, waived or gone)."""
    absent: dict[str, Any] = {
        "ruleId": rule,
        "kind": "pass",
        "level": "none",
        "baselineState": "absent",
        "message": {"text": f"{obj}: open in the baseline, open no more"},
        "locations": [{"logicalLocations": [{"name": obj}]}],
    }
    if index is not None:
        absent["ruleIndex"] = index
    return absent


def _not_proven(f: Finding) -> bool:
    """Not proven, waived or not: a waiver accepts the risk, it proves nothing."""
    return f.status == "unproven" or (f.status == "waived" and "not_proven" in f.evidence)


def _with_age(sarif_result: dict[str, Any], age: tuple[str, int] | None) -> dict[str, Any]:
    """A result of known age carries firstSeen and ageDays in its properties."""
    if age is not None:
        sarif_result["properties"]["firstSeen"] = age[0]
        sarif_result["properties"]["ageDays"] = age[1]
    return sarif_result


def render_sarif(result: AuditResult) -> dict[str, Any]:
    index = {r.id: i for i, r in enumerate(result.rules)}
    inv = result.inventory
    datacenters = {c.name: c.datacenter for c in inv.clusters}
    datacenters.update({h.name: h.datacenter for h in inv.hosts if not h.cluster})
    results = [
        _with_age(
            _result(f, index.get(f.rule), datacenters.get(f.cluster or f.host or "", "")),
            finding_age(result, f),
        )
        for f in result.findings
        if f.status != "pass"
    ]
    judgement = judgement_of(result)
    if judgement.states is not None:
        shown = [f for f in result.findings if f.status != "pass"]
        for sarif_result, f in zip(results, shown, strict=True):
            sarif_result["baselineState"] = _state(judgement, f)
        listed = {(f.rule, f.object) for f in shown}
        results += [
            _absent(rule, obj, index.get(rule))
            for rule, obj in judgement.absent()
            if (rule, obj) not in listed
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
                # The base is named, not given a URI: it is a vCenter's inventory, which
                # no file system holds (SARIF lets a base id's uri be left out).
                "originalUriBaseIds": {
                    URI_BASE_ID: {
                        "description": {"text": f"the vSphere inventory of {inv.source}"},
                        "properties": {"vcenter": inv.source},
                    }
                },
                "results": results,
                "properties": {
                    "source": inv.source,
                    "vcenter": inv.vcenter.name,
                    "licences": licence_summary(inv, result.findings).to_dict(),
                },
            }
        ],
    }
