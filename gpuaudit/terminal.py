"""Text from a server or a file, made safe to print on a terminal.

A name a vCenter serves may hold control characters: a carriage return that
moves the cursor back and prints a fake PASS over the real line, an escape
sequence that recolours or clears the screen. Every such character is shown
escaped instead (``\\r``, ``\\x1b``), as Python writes it in a string.
"""

from __future__ import annotations

_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}
# C0 controls (ESC among them), DEL and the C1 controls (U+009B is a one-byte CSI).
_CONTROLS = [*range(0x00, 0x20), *range(0x7F, 0xA0)]
_ESCAPES = str.maketrans({code: _NAMED.get(chr(code), f"\\x{code:02x}") for code in _CONTROLS})


def printable(text: object) -> str:
    """``text`` with every C0 and C1 control character, ESC and DEL escaped."""
    return str(text).translate(_ESCAPES)
