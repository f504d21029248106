"""The types of what a check produces: severities, statuses, categories and object kinds
are closed sets, and the plain-data layers pass mypy --strict."""

from __future__ import annotations

import configparser
from pathlib import Path

import pytest
from mypy import api

from gpuaudit import results
from gpuaudit.report.json_report import ReportError, from_json_data, render_json
from gpuaudit.rules import registry
from tests.support.report_fixtures import realistic_result

ROOT = Path(__file__).resolve().parent.parent
# The layers that touch neither pyVmomi nor an openpyxl workbook.
STRICT = {
    "gpuaudit.errors",
    "gpuaudit.kubernetes.*",
    "gpuaudit.model.policy_file",
    "gpuaudit.jobs.scan",
    "gpuaudit.inventory",
    "gpuaudit.results",
    "gpuaudit.model.facts",
    "gpuaudit.simulation.failures",
    "gpuaudit.knowledge.*",
    "gpuaudit.common.files",
    "gpuaudit.common.yamlread",
    "gpuaudit.jobs.diff",
    "gpuaudit.model.policy",
    "gpuaudit.verdict.check",
    "gpuaudit.rules.*",
    "gpuaudit.report.naming",
    "gpuaudit.report.text",
    "gpuaudit.report.json_report",
    "gpuaudit.report.sarif",
    "gpuaudit.report.junit",
    "gpuaudit.report.summary",
    "gpuaudit.report.licences",
}


def source_files(module: str) -> list[Path]:
    if module.endswith(".*"):
        return sorted((ROOT / module[:-2].replace(".", "/")).glob("*.py"))
    return [ROOT / (module.replace(".", "/") + ".py")]


def test_the_plain_data_layers_pass_mypy_strict(tmp_path: Path) -> None:
    files = [str(f) for m in sorted(STRICT) for f in source_files(m)]
    assert all(Path(f).is_file() for f in files), files
    args = ["--config-file", str(ROOT / "setup.cfg"), "--cache-dir", str(tmp_path)]
    args += ["--strict", "--follow-imports=silent", *files]
    out, err, status = api.run(args)
    assert status == 0, out + err
    assert f"no issues found in {len(files)} source files" in out


# mypy's --strict as per-module options (--strict itself is a global option).
STRICT_FLAGS = (
    "disallow_any_generics",
    "disallow_subclassing_any",
    "disallow_untyped_calls",
    "disallow_untyped_defs",
    "disallow_incomplete_defs",
    "check_untyped_defs",
    "disallow_untyped_decorators",
    "warn_unused_ignores",
    "warn_return_any",
    "no_implicit_reexport",
    "strict_equality",
    "extra_checks",
)


def test_everyday_mypy_holds_the_same_layers_to_strict() -> None:
    """scripts/test runs plain ``mypy gpuaudit``: setup.cfg makes it strict on the list."""
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    strict = [
        section
        for section in config.sections()
        if section.startswith("mypy-")
        and all(config.getboolean(section, flag, fallback=False) for flag in STRICT_FLAGS)
    ]
    modules = {m.strip() for s in strict for m in s.removeprefix("mypy-").split(",")}
    assert modules == STRICT
    assert config.getboolean("mypy", "warn_redundant_casts")


def test_the_closed_sets_keep_their_values_and_order() -> None:
    # Worst first: severity_rank, --fail-on and every report's order depend on it.
    assert results.SEVERITIES == ("critical", "high", "medium", "low", "info")
    assert results.STATUSES == ("fail", "unproven", "waived", "pass")
    assert results.CATEGORIES == (
        "ha",
        "vmotion",
        "gpu",
        "storage",
        "design",
        "data",
        "monitoring",
        "licensing",
    )
    assert results.OBJECT_KINDS == (
        "cluster",
        "host",
        "gpu",
        "vm",
        "datastore",
        "vcenter",
        "inventory",
        "kubernetes-cluster",
        "kubernetes-node",
    )
    assert all(type(v) is str for v in results.SEVERITIES + results.STATUSES)


def test_a_rule_of_an_unknown_object_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown object kind 'gpus'"):
        registry.rule(
            id="XX-99",
            title="t",
            category="gpu",
            severity="info",
            object_kind="gpus",  # type: ignore[arg-type]
            rationale="r",
            remediation="m",
        )


@pytest.mark.parametrize(
    ("where", "field", "value"),
    [
        ("findings", "severity", "urgent"),
        ("findings", "status", "skipped"),
        ("findings", "object_kind", "rack"),
        ("rules", "category", "network"),
        ("rules", "severity", "High"),
    ],
)
def test_a_report_read_back_holds_only_known_values(where: str, field: str, value: str) -> None:
    doc = render_json(realistic_result())
    assert from_json_data(doc).findings  # the untouched report reads back
    doc[where][0][field] = value
    with pytest.raises(ReportError, match=rf"^{where}\[\]\.{field}: expected one of "):
        from_json_data(doc)
