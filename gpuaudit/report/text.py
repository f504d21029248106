"""Making untrusted text (names from vCenter) safe for each output format.

Names come from the server and may hold anything: markup, formula prefixes,
path separators, or control characters that XML 1.0 forbids. HTML output relies
on Jinja2's autoescaping; the helpers here cover XML (xlsx, JUnit) and
spreadsheets.
"""

from __future__ import annotations

import re

from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE

# Characters XML 1.0 does not allow anywhere in a document: the C0 controls
# other than tab, newline and carriage return (openpyxl's own list, which it
# refuses in a cell), lone surrogates, and U+FFFE/U+FFFF.
_XML_ILLEGAL = re.compile(f"{ILLEGAL_CHARACTERS_RE.pattern}|[\ud800-\udfff\ufffe\uffff]")

# A spreadsheet treats a cell typed by hand that starts with one of these as a
# formula (OWASP's list for CSV injection).
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def xml_text(value: str) -> str:
    """``value`` with each character XML 1.0 forbids replaced by a visible ``\\xNN``."""
    return _XML_ILLEGAL.sub(_visible, value)


def looks_like_formula(value: str) -> bool:
    return value.startswith(FORMULA_PREFIXES)


def one_line(value: str, limit: int = 200) -> str:
    """Collapse whitespace and cut to ``limit`` characters, for short messages."""
    text = " ".join(value.split())
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"
