"""Untrusted text made safe: characters XML forbids shown, formulas told, lines cut.

Every expectation is written out by hand from XML 1.0's character range, OWASP's
list of formula prefixes, and the documented limit of 200 characters; xml_text
replaces only the characters XML forbids, so JUnit XML stays well-formed.
"""

from __future__ import annotations

import pytest

from gpuaudit.report.text import looks_like_formula, one_line, xml_text


def test_each_character_xml_forbids_is_shown_and_the_rest_kept() -> None:
    value = "a\x00b\x08\x0b\x0c\x1f\t\n\r\ud800\udfff\ufffe\uffff\u0100\u00e9\ud7ff"
    assert xml_text(value) == (
        "a\\x00b\\x08\\x0b\\x0c\\x1f\t\n\r\\ud800\\udfff\\ufffe\\uffff\u0100\u00e9\ud7ff"
    )


def test_plain_text_is_left_alone() -> None:
    assert xml_text("esx-01.corp <a&b>") == "esx-01.corp <a&b>"


@pytest.mark.parametrize("value", ["=SUM(A1)", "+1", "-1", "@x", "\tx", "\rx"])
def test_a_formula_prefix_is_told(value: str) -> None:
    assert looks_like_formula(value)


@pytest.mark.parametrize("value", ["", "a=b", " =1", "vm-01", "\nx"])
def test_other_text_is_no_formula(value: str) -> None:
    assert not looks_like_formula(value)


def test_whitespace_collapses_to_single_spaces() -> None:
    assert one_line("  HA \t is\n\n off  ") == "HA is off"


def test_two_hundred_characters_stay_whole_and_more_are_cut_with_an_ellipsis() -> None:
    assert one_line("x" * 200) == "x" * 200
    assert one_line("x" * 201) == "x" * 199 + "\u2026"
    assert one_line("abcdef", limit=4) == "abc\u2026"
    assert one_line("abcd", limit=4) == "abcd"


def test_xml_text_replaces_only_forbidden_characters() -> None:
    assert xml_text("a\x00b\x01c\x0bd\x1fe") == "a\\x00b\\x01c\\x0bd\\x1fe"
    assert xml_text("tab\there\nnew\rcr") == "tab\there\nnew\rcr"
    assert xml_text("\ufffe\uffff\ud800") == "\\ufffe\\uffff\\ud800"
    assert xml_text("Ünïcødé 集群 \u2028") == "Ünïcødé 集群 \u2028"
