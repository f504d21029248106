"""Text from a server or a file, made safe to print on a terminal.

A name a vCenter serves may hold control characters: a carriage return that
moves the cursor back and prints a fake PASS over the real line, an escape
sequence that recolours or clears the screen. Every such character is shown
escaped instead (``\\r``, ``\\x1b``), as Python writes it in a string.

Two more kinds are escaped the same way (``\\u202e``, ``\\ud800``):

- Unicode's bidirectional controls (U+202A to U+202E, U+2066 to U+2069,
  U+200E, U+200F and U+061C), which reorder what follows them on the screen, so
  that a name can show one thing and hold another;
- lone surrogates (U+D800 to U+DFFF), which a JSON file may escape (``"\\ud800"``)
  and a mis-encoded argument may carry, and which no UTF-8 stream can write: one
  would end the program with a ``UnicodeEncodeError``.
"""

from __future__ import annotations

_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}
# C0 controls (ESC among them), DEL and the C1 controls (U+009B is a one-byte CSI).
_CONTROLS = [*range(0x00, 0x20), *range(0x7F, 0xA0)]
# Embeddings and overrides, isolates, the implicit marks, the Arabic letter mark.
BIDI_CONTROLS = [*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C]
SURROGATES = range(0xD800, 0xE000)
_INVISIBLE = {code: f"\\u{code:04x}" for code in [*BIDI_CONTROLS, *SURROGATES]}
_ESCAPES = str.maketrans(
    {**{code: _NAMED.get(chr(code), f"\\x{code:02x}") for code in _CONTROLS}, **_INVISIBLE}
)
_INVISIBLE_ESCAPES = str.maketrans(_INVISIBLE)


def printable(text: object) -> str:
    """``text`` with every C0 and C1 control character, ESC, DEL, bidirectional
    control and lone surrogate escaped."""
    return str(text).translate(_ESCAPES)


def printable_lines(text: str) -> str:
    """``text`` with its bidirectional controls and lone surrogates escaped as
    ``\\uXXXX``, its line breaks kept: for log lines and JSON on a terminal.

    In a JSON document such a character can only stand inside a string, where
    its ``\\uXXXX`` escape is the same character: the JSON keeps its meaning.
    """
    return text.translate(_INVISIBLE_ESCAPES)
