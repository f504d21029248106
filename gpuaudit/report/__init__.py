"""Reports: HTML for the admin, Excel for the auditor, JSON, JUnit XML, SARIF and metrics for jobs.

Every renderer reads only an AuditResult. ``write_reports`` writes the chosen
formats into one folder, each under a name that carries the server and a UTC
timestamp, through a temporary file renamed into place.

It sits above the verdict and imports what is below it (the plans' and rules'
vocabulary, the results, the inventory, the common helpers); only the jobs and the
command line import it.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gpuaudit.common.files import write_new
from gpuaudit.common.gc_pause import gc_paused, long_lived
from gpuaudit.errors import during
from gpuaudit.report.html import render_html
from gpuaudit.report.json_report import (
    REPORT_SCHEMA_VERSION,
    ReportError,
    load_json_report,
    render_json,
    report_document,
    report_schema,
    write_json,
)
from gpuaudit.report.junit import render_junit
from gpuaudit.report.metrics import render_metrics
from gpuaudit.report.naming import EXTENSIONS, FORMATS, report_filename, report_stem, safe_server
from gpuaudit.report.sarif import render_sarif
from gpuaudit.report.xlsx import render_xlsx
from gpuaudit.results import AuditResult

__all__ = [
    "FORMATS",
    "REPORT_SCHEMA_VERSION",
    "ReportError",
    "load_json_report",
    "render_html",
    "render_json",
    "render_junit",
    "render_metrics",
    "render_sarif",
    "render_xlsx",
    "report_filename",
    "report_schema",
    "safe_server",
    "write_reports",
]

DEFAULT_DIR = Path("reports")


def _encode(text: str) -> bytes:
    # A lone surrogate in a name cannot be UTF-8: replace it rather than fail.
    return text.encode("utf-8", errors="replace")


def _json_bytes(doc: dict[str, Any]) -> bytes:
    # Written piece by piece from the result's objects: neither the whole text
    # nor a copy of the data built from it is ever held.
    buffer = io.BytesIO()
    write_json(doc, buffer)
    return buffer.getvalue()


def _indented_json_bytes(doc: dict[str, Any]) -> bytes:
    """``_encode(json.dumps(doc, indent=1, ensure_ascii=False, allow_nan=False) + "\\n")``,
    encoded a batch of pieces at a time: json.dumps joins a list of every piece of
    the text, one per key, value and indentation (millions for a large estate)."""
    encoder = json.JSONEncoder(ensure_ascii=False, allow_nan=False, indent=1)
    buffer = io.BytesIO()
    batch: list[str] = []
    for chunk in encoder.iterencode(doc):
        batch.append(chunk)
        if len(batch) >= _BATCH:
            buffer.write(_encode("".join(batch)))
            batch.clear()
    batch.append("\n")
    buffer.write(_encode("".join(batch)))
    return buffer.getvalue()


_BATCH = 65536


RENDERERS: dict[str, Callable[[AuditResult], bytes]] = {
    "html": lambda r: _encode(render_html(r)),
    "xlsx": render_xlsx,
    "json": lambda r: _json_bytes(report_document(r)),
    "junit": render_junit,
    "sarif": lambda r: _indented_json_bytes(render_sarif(r)),
    "openmetrics": render_metrics,
}


def write_reports(
    result: AuditResult,
    output_dir: Path,
    formats: Sequence[str],
    server: str,
    now: datetime | None = None,
) -> list[Path]:
    """Write ``formats`` (from FORMATS) to ``output_dir``; return the paths, in that order.

    The files share one stem, gpuaudit-<server>-<UTC time>. If a file of that
    stem exists already (a run in the same second, or one writing at this very
    moment), all of them take a counter, ``-1``, ``-2``, ..., rather than
    overwrite another report: the names are claimed before the files are written.
    Every format is rendered first, so that a failing renderer writes nothing.
    """
    unknown = [f for f in formats if f not in EXTENSIONS]
    if unknown:
        raise ValueError(f"unknown report format {unknown[0]!r}; known: {', '.join(FORMATS)}")
    wanted = list(dict.fromkeys(formats))
    stem = report_stem(server, now or datetime.now(UTC))
    files = []
    # The result (and its inventory) outlives the renderers: frozen, it is not walked
    # by a collection while they run. Each renderer builds its tables or document and
    # keeps them to its end: paused, the collector does not walk them again and again
    # as they grow, and collects what the renderer left in cycles once it returns.
    with long_lived():
        for fmt in wanted:
            with during(f"writing the {fmt} report"), gc_paused():
                files.append((f".{EXTENSIONS[fmt]}", RENDERERS[fmt](result)))
    return write_new(Path(output_dir), stem, files)
