"""The rule catalogue as data, text and Markdown, each written out by hand.

The rules are tests/support/small_report.py's: HA-01 with a rationale, a remediation and
two references, and GPU-02 with none of them.
"""

from __future__ import annotations

import dataclasses

import pytest

from gpuaudit.report.catalogue import (
    BEGIN,
    END,
    catalogue_data,
    catalogue_markdown,
    catalogue_text,
    with_catalogue,
)
from tests.support.small_report import GPU_02, HA_01

INDENT = " " * 9


def test_data_is_every_field_of_every_rule() -> None:
    assert catalogue_data([HA_01, GPU_02]) == [
        {
            "id": "HA-01",
            "title": "HA is on",
            "category": "ha",
            "severity": "critical",
            "rationale": "HA restarts GPU VMs.",
            "remediation": "Turn HA on.",
            "object_kind": "cluster",
            "references": (
                {"title": "vSphere HA", "url": "https://docs.example/ha"},
                {"title": "KB 2", "url": "https://kb.example/2"},
            ),
        },
        {
            "id": "GPU-02",
            "title": "Profiles fit",
            "category": "gpu",
            "severity": "medium",
            "rationale": "",
            "remediation": "",
            "object_kind": "vm",
            "references": (),
        },
    ]


def test_text_is_one_block_per_rule() -> None:
    assert catalogue_text([HA_01, GPU_02]) == (
        "HA-01    critical ha       HA is on\n"
        f"{INDENT}HA restarts GPU VMs.\n"
        f"{INDENT}Fix: Turn HA on.\n"
        f"{INDENT}Ref: vSphere HA <https://docs.example/ha>\n"
        f"{INDENT}Ref: KB 2 <https://kb.example/2>\n"
        "\n"
        "GPU-02   medium   gpu      Profiles fit\n"
        f"{INDENT}Fix:\n"
    )


def test_text_wraps_at_78_characters_by_default_with_the_indent() -> None:
    # 9 + 69 = 78 characters fit; a 70th letter goes to the next line.
    fits = dataclasses.replace(GPU_02, rationale="a" * 60 + " " + "b" * 8)
    assert catalogue_text([fits]).splitlines()[1] == INDENT + "a" * 60 + " " + "b" * 8
    wraps = dataclasses.replace(GPU_02, rationale="a" * 60 + " " + "b" * 9)
    assert catalogue_text([wraps]).splitlines()[1:3] == [INDENT + "a" * 60, INDENT + "b" * 9]


def test_text_wraps_at_the_width_asked_for() -> None:
    rule = dataclasses.replace(GPU_02, rationale="one two three four", remediation="five six seven")
    assert catalogue_text([rule], width=20) == (
        "GPU-02   medium   gpu      Profiles fit\n"
        f"{INDENT}one two\n"
        f"{INDENT}three four\n"
        f"{INDENT}Fix: five\n"
        f"{INDENT}six seven\n"
    )


def test_markdown_is_a_table_then_a_section_per_rule() -> None:
    piped = dataclasses.replace(GPU_02, title="Profiles | sizes")
    assert catalogue_markdown([HA_01, piped]) == (
        "| id | severity | object | title |\n"
        "|---|---|---|---|\n"
        "| HA-01 | critical | cluster | HA is on |\n"
        "| GPU-02 | medium | vm | Profiles \\| sizes |\n"
        "\n"
        "### HA-01: HA is on\n"
        "\n"
        "*ha, critical, examines each cluster*\n"
        "\n"
        "HA restarts GPU VMs.\n"
        "\n"
        "**Remediation:** Turn HA on.\n"
        "\n"
        "**References:**\n"
        "\n"
        "- [vSphere HA](https://docs.example/ha)\n"
        "- [KB 2](https://kb.example/2)\n"
        "\n"
        "### GPU-02: Profiles | sizes\n"
        "\n"
        "*gpu, medium, examines each vm*\n"
        "\n"
        "\n"
        "\n"
        "**Remediation:** \n"
    )


MARKDOWN = (
    "| id | severity | object | title |\n"
    "|---|---|---|---|\n"
    "| GPU-02 | medium | vm | Profiles fit |\n"
    "\n"
    "### GPU-02: Profiles fit\n"
    "\n"
    "*gpu, medium, examines each vm*\n"
    "\n"
    "\n"
    "\n"
    "**Remediation:** \n"
)


def test_the_catalogue_replaces_what_lies_between_the_markers() -> None:
    document = f"# Rules\n\n{BEGIN}\nold text\n{END}\nafter\n"
    assert with_catalogue(document, [GPU_02]) == (
        f"# Rules\n\n{BEGIN}\n\n{MARKDOWN}\n{END}\nafter\n"
    )


def test_markers_at_the_very_start_and_markers_quoted_later_stay() -> None:
    # The first begin marker and the first end marker bound the catalogue; a
    # later copy of either (say, quoted in a code block) is kept as text.
    document = f"{BEGIN}\nold\n{END}\nquoted: {BEGIN} and {END}\n"
    assert with_catalogue(document, [GPU_02]) == (
        f"{BEGIN}\n\n{MARKDOWN}\n{END}\nquoted: {BEGIN} and {END}\n"
    )


MISSING = f"the document has no catalogue markers ({BEGIN} ... {END})"


@pytest.mark.parametrize(
    "document",
    ["# Rules\n", f"# Rules\n{END}\n", f"# Rules\n{BEGIN}\n", f"{END}\nold\n{BEGIN}\n"],
)
def test_a_document_without_both_markers_in_order_is_refused(document: str) -> None:
    with pytest.raises(ValueError) as raised:
        with_catalogue(document, [GPU_02])
    assert str(raised.value) == MISSING
