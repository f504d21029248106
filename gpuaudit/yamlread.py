"""Strict YAML reading for the files people write: every error names the file and line.

Policy and targets files are read from the YAML node tree rather than from
``yaml.safe_load``'s plain objects, so that an unknown key, a wrong type or a
bad date is reported where it stands, never as a traceback.
"""

from __future__ import annotations

import math
from datetime import date
from pathlib import Path
from typing import Any

import yaml
from yaml.reader import ReaderError


class InputFileError(ValueError):
    """A file that cannot be used; the message names the file and, where known, the line."""

    def __init__(self, source: str, line: int | None, message: str) -> None:
        self.source = source
        self.line = line
        self.detail = message
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: {message}")


class YamlReader:
    """Walks a YAML node tree; subclasses describe one kind of document."""

    error: type[InputFileError] = InputFileError

    def __init__(self, source: str) -> None:
        self.source = source
        self._loader = yaml.SafeLoader("")

    def read_file(self, path: str | Path) -> yaml.Node | None:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise self.error(self.source, None, f"cannot read: {exc}") from None
        return self.parse(text)

    def parse(self, text: str) -> yaml.Node | None:
        try:
            root = yaml.compose(text, Loader=yaml.SafeLoader)
        except ReaderError as exc:  # a NUL or another character YAML refuses
            at = text.count("\n", 0, exc.position) + 1
            char = f"U+{exc.character:04X}" if isinstance(exc.character, int) else exc.character
            raise self.error(
                self.source, at, f"not valid YAML: the character {char} is not allowed"
            ) from None
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = mark.line + 1 if mark is not None else None
            problem = " ".join(str(getattr(exc, "problem", None) or exc).split())
            raise self.error(self.source, line, f"not valid YAML: {problem}") from None
        except RecursionError:
            raise self.error(self.source, None, "not valid YAML: nested too deeply") from None
        self._refuse_unknown_tags(root)
        return root

    def _refuse_unknown_tags(self, root: yaml.Node | None) -> None:
        """A tag plain YAML does not define (``!foo``, ``!!python/object``) is a mistake."""
        known = {tag for tag in yaml.SafeLoader.yaml_constructors if tag is not None}
        known |= {"tag:yaml.org,2002:map", "tag:yaml.org,2002:merge"}
        stack = [root] if root is not None else []
        seen: set[int] = set()
        # Not recursive, and each node once: an alias may point back at its anchor.
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if node.tag not in known:
                raise self.fail(node, f"unknown YAML tag {node.tag!r}")
            if isinstance(node, yaml.MappingNode):
                stack.extend(item for pair in node.value for item in pair)
            elif isinstance(node, yaml.SequenceNode):
                stack.extend(node.value)

    def fail(self, node: yaml.Node, message: str) -> InputFileError:
        return self.error(self.source, node.start_mark.line + 1, message)

    def mapping(self, node: yaml.Node, where: str, keys: set[str] | None) -> dict[str, yaml.Node]:
        if not isinstance(node, yaml.MappingNode):
            raise self.fail(node, f"{where}: expected a mapping")
        out: dict[str, yaml.Node] = {}
        for key_node, value in node.value:
            key = self.value(key_node)
            if not isinstance(key, str):
                raise self.fail(key_node, f"{where}: keys must be text, not {key!r} (quote it)")
            if key in out:
                raise self.fail(key_node, f"{where}: duplicate key {key!r}")
            if keys is not None and key not in keys:
                known = ", ".join(sorted(keys))
                raise self.fail(key_node, f"{where}: unknown key {key!r} (known: {known})")
            out[key] = value
        return out

    def sequence(self, node: yaml.Node, where: str) -> list[yaml.Node]:
        if not isinstance(node, yaml.SequenceNode):
            raise self.fail(node, f"{where}: expected a list")
        return list(node.value)

    def value(self, node: yaml.Node) -> Any:
        if not isinstance(node, yaml.ScalarNode):
            raise self.fail(node, "expected a single value")
        try:
            return self._loader.construct_object(node, deep=True)
        except (ValueError, yaml.YAMLError) as exc:
            raise self.fail(node, f"invalid value {node.value!r}: {exc}") from None

    def text(self, node: yaml.Node, where: str) -> str:
        value = self.value(node)
        if not isinstance(value, str) or not value.strip():
            raise self.fail(node, f"{where}: expected text (quote it if it looks like a number)")
        if "\0" in value:
            raise self.fail(node, f"{where}: a NUL character (\\0) is not allowed in text")
        return value

    def boolean(self, node: yaml.Node, where: str) -> bool:
        value = self.value(node)
        if not isinstance(value, bool):
            raise self.fail(node, f"{where}: expected true or false")
        return value

    def number(
        self, node: yaml.Node, where: str, low: float = 0.0, high: float = math.inf
    ) -> float:
        """A finite number from ``low`` to ``high``: never .nan or .inf, which no report holds."""
        value = self.value(node)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(node, f"{where}: expected a number of {low:g} or more")
        if not math.isfinite(value):
            raise self.fail(node, f"{where}: expected a number, not {node.value!r}")
        if not low <= value <= high:
            bounds = f"from {low:g} to {high:g}" if high < math.inf else f"of {low:g} or more"
            raise self.fail(node, f"{where}: expected a number {bounds}, not {value:g}")
        return float(value)

    def whole(self, node: yaml.Node, where: str, minimum: int = 0) -> int:
        value = self.value(node)
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.fail(node, f"{where}: expected a whole number of {minimum} or more")
        return value

    def day(self, node: yaml.Node, where: str) -> date:
        try:
            value = self.value(node)
        except InputFileError as exc:  # a date YAML cannot make: 2027-02-30
            raise self.fail(node, f"{where}: {exc.detail} (a date is YYYY-MM-DD)") from None
        if isinstance(value, date) and not hasattr(value, "hour"):
            return value
        if isinstance(value, str):
            try:
                return date.fromisoformat(value)
            except ValueError:
                pass
        raise self.fail(node, f"{where}: expected a date as YYYY-MM-DD")
