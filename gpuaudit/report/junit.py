"""JUnit XML: one test case per rule and object, so CI servers list audit results as tests.

Each category is a test suite; a test case's classname is ``gpuaudit.<category>.<rule id>``
and its name the object. A failed finding is a <failure>, a waived one <skipped>,
and a finding not proven, or a rule that raised, an <error>: the verdict could not
be reached, which a CI server counts against the run, never as a pass. A
not-proven <error> has the type "not proven" and its reason as the message.

An info finding that fails is a notice: <skipped> with the message "notice: ...".
With a baseline only a new finding fails (or errs); one open in the baseline too
is <skipped> with the message "unchanged since the baseline: ...", so that the
CI run's failures are the job's verdict.

The document is valid against both schemas CI servers read JUnit with: Jenkins'
xUnit junit-10.xsd and Apache Ant's aggregated JUnitReport schema. Ant's allows no
attribute on <testsuites> (the totals live on each suite), and requires each suite's
package, id, timestamp (local form, no zone), hostname, <system-out> and <system-err>.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict

from gpuaudit.report.licences import licence_summary
from gpuaudit.report.summary import parse_time
from gpuaudit.report.tables import evidence_text
from gpuaudit.report.text import one_line, xml_text
from gpuaudit.results import NOTICE, AuditResult, Finding, Judgement, Rule
from gpuaudit.rules.data import NOTHING_EXAMINED
from gpuaudit.verdict.judgement import judgement_of


def _el(parent: ET.Element, tag: str, **attrs: str) -> ET.Element:
    return ET.SubElement(parent, tag, {k: xml_text(v) for k, v in attrs.items()})


def _case_name(f: Finding) -> str:
    where = f" (cluster {f.cluster})" if f.cluster and f.cluster != f.object else ""
    return f"{f.object_kind} {f.object}{where}"


def _details(f: Finding, rule: Rule | None) -> str:
    lines = [
        f"Rule: {f.rule}" + (f" {rule.title}" if rule else ""),
        f"Severity: {f.severity}",
        f"Object: {f.object_kind} {f.object}",
    ]
    if f.cluster:
        lines.append(f"Cluster: {f.cluster}")
    if f.host:
        lines.append(f"Host: {f.host}")
    lines.append(f"Message: {f.message}")
    if f.evidence:
        lines.append(f"Evidence: {evidence_text(f.evidence)}")
    if rule:
        lines.append(f"Remediation: {rule.remediation}")
    return "\n".join(lines) + "\n"


def _quiet(f: Finding, judgement: Judgement) -> str | None:
    """Why an open finding is skipped rather than failed: an info finding is a notice,
    and with a baseline only a new finding fails."""
    if not f.open:
        return None
    if f.failed and f.rule == NOTHING_EXAMINED:
        return None  # nothing examined fails the job whatever the baseline holds
    if judgement.state(f) == "unchanged":
        return "unchanged since the baseline"
    if f.failed and f.severity == NOTICE:
        return "notice"
    return None


def _outcome(f: Finding, judgement: Judgement) -> str:
    """The element a finding's test case holds: failure, error, skipped or none."""
    if _quiet(f, judgement) or f.status == "waived":
        return "skipped"
    return {"fail": "failure", "unproven": "error"}.get(f.status, "")


def licence_properties(result: AuditResult) -> dict[str, str]:
    """The licence summary as properties: powered-on vGPU VMs per NVIDIA edition."""
    summary = licence_summary(result.inventory, result.findings)
    out = {f"licences.{edition}": str(n) for edition, n in summary.totals.items()}
    out["licences.total"] = str(summary.total)
    out["licences.note"] = summary.note
    return out


def render_junit(result: AuditResult) -> bytes:
    rules = {r.id: r for r in result.rules}
    suites: dict[str, list[Finding]] = defaultdict(list)
    for f in result.findings:
        rule = rules.get(f.rule)
        suites[rule.category if rule else "other"].append(f)
    errors_by_suite: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for e in result.errors:
        rule = rules.get(e.rule)
        errors_by_suite[rule.category if rule else "other"].append((e.rule, e.error))

    stamp = parse_time(result.checked_at) or parse_time(result.inventory.collected_at)
    # The schemas' own word for a host that is not known.
    source = result.inventory.source or "localhost"
    root = ET.Element("testsuites")
    judgement = judgement_of(result)
    licences = licence_properties(result)
    for suite_id, category in enumerate(sorted(set(suites) | set(errors_by_suite))):
        findings = suites.get(category, [])
        errors = errors_by_suite.get(category, [])
        outcomes = [_outcome(f, judgement) for f in findings]
        counts = {
            "tests": len(findings) + len(errors),
            "failures": outcomes.count("failure"),
            "errors": len(errors) + outcomes.count("error"),
            "skipped": outcomes.count("skipped"),
        }
        name = f"gpuaudit.{category}"
        attrs = {"name": name, "package": name, "id": str(suite_id)}
        if stamp:  # UTC, written without a zone as Ant's schema requires
            attrs["timestamp"] = stamp.strftime("%Y-%m-%dT%H:%M:%S")
        attrs |= {"hostname": source, "time": "0"} | {k: str(v) for k, v in counts.items()}
        suite = _el(root, "testsuite", **attrs)
        props = _el(suite, "properties")
        _el(props, "property", name="source", value=source)
        _el(props, "property", name="rules_version", value=result.rules_version)
        _el(props, "property", name="tool_version", value=result.tool_version)
        for name, value in licences.items():
            _el(props, "property", name=name, value=value)
        for f in findings:
            rule = rules.get(f.rule)
            case = _el(
                suite,
                "testcase",
                classname=f"gpuaudit.{category}.{f.rule}",
                name=_case_name(f),
                time="0",
            )
            quiet = _quiet(f, judgement)
            if quiet:
                _el(case, "skipped", message=one_line(f"{quiet}: {f.message}"))
            elif f.status == "fail":
                failure = _el(case, "failure", message=one_line(f.message), type=f.severity)
                failure.text = xml_text(_details(f, rule))
            elif f.status == "unproven":
                reason = f.evidence.get("not_proven") or "a fact it needs is not known exactly"
                err = _el(
                    case, "error", message=one_line(f"not proven: {reason}"), type="not proven"
                )
                err.text = xml_text(_details(f, rule))
            elif f.status == "waived":
                w = f.waiver
                why = f"waived: {w.reason} ({w.owner}, until {w.expires})" if w else "waived"
                _el(case, "skipped", message=one_line(why))
        for rule_id, error in errors:
            case = _el(
                suite,
                "testcase",
                classname=f"gpuaudit.{category}.{rule_id}",
                name="rule raised",
                time="0",
            )
            err = _el(case, "error", message=one_line(error), type="RuleError")
            err.text = xml_text(error)
        _el(suite, "system-out")
        _el(suite, "system-err")
    ET.indent(root)
    body: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return body
