"""Where a checkout finds its templates and demo cassettes: beside its own code."""

from __future__ import annotations

from pathlib import Path

from gpuaudit.common import shipped

CHECKOUT = Path(__file__).resolve().parents[2]


def test_a_checkout_reads_its_own_templates_and_cassettes() -> None:
    # Even with another checkout installed in editable mode, whose mapping of
    # gpuaudit.templates points at that checkout's folder.
    templates = shipped.folder(shipped.TEMPLATES, "report.html.j2")
    assert Path(str(templates)).resolve() == CHECKOUT / "templates"
    report = shipped.file_path(shipped.TEMPLATES, "report.css")
    assert report.resolve() == CHECKOUT / "templates" / "report.css"


def test_a_file_shipped_nowhere() -> None:
    try:
        shipped.folder(shipped.TEMPLATES, "no-such-file.j2")
    except FileNotFoundError as error:
        assert "no-such-file.j2" in str(error)
    else:
        raise AssertionError("a missing file was found")
