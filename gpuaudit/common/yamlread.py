"""Strict YAML reading for the files people write: every error names the file and line.

Policy and targets files are composed into YAML's node tree, turned into plain
data, and validated by pydantic models (``InputModel``) in strict mode: no
unknown key, no ``'yes'`` for true, no ``5`` where text is meant. A pydantic
error's ``loc`` is followed back through the node tree to the key or value it
is about, so that the message names the line where the mistake stands, never a
traceback.

Still written by hand here, because pydantic sees only the plain data:
- duplicate keys and keys that are not text (a Python dict keeps one key and
  does not say that YAML had two; ``2024:`` becomes an int key);
- YAML tags that are not plain YAML, and values YAML itself cannot make
  (``2027-02-30``), both found while the node tree is read;
- the wording of each message, ``where: what is wrong``, from the error's type
  and the field's bounds (pydantic's own text names no line and reads as a
  programmer's message).
Checks that span records (a second target of the same name, a user given in
neither a target nor the defaults) stay with the readers, after validation.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from pathlib import Path
from types import NoneType, UnionType
from typing import Annotated, Any, ClassVar, TypeVar, Union, get_args, get_origin

import annotated_types
import yaml
from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails, PydanticCustomError
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
    # What to say when a required key is missing, by key; otherwise "missing <keys>".
    missing: ClassVar[dict[str, str]] = {}

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

    # From nodes to plain data
    def plain(self, root: yaml.Node, name: str) -> Any:
        """The document as dicts, lists and scalars; ``name`` is the root's in messages.

        An alias becomes the same object as its anchor, so that an alias bomb costs
        no more memory than its text.
        """
        made: dict[int, Any] = {}

        def make(node: yaml.Node, where: str) -> Any:
            if id(node) in made:
                return made[id(node)]
            if isinstance(node, yaml.MappingNode):
                mapping: dict[str, Any] = {}
                made[id(node)] = mapping
                for key_node, value in node.value:
                    key = self._key(key_node, where or name, mapping)
                    mapping[key] = make(value, f"{where}.{key}" if where else key)
                return mapping
            if isinstance(node, yaml.SequenceNode):
                items: list[Any] = []
                made[id(node)] = items
                items.extend(make(item, f"{where}[{i}]") for i, item in enumerate(node.value))
                return items
            return self._scalar(node, where or name)

        try:
            return make(root, "")
        except RecursionError:
            raise self.error(self.source, None, "not valid YAML: nested too deeply") from None

    def _key(self, node: yaml.Node, where: str, seen: Mapping[str, Any]) -> str:
        if not isinstance(node, yaml.ScalarNode):
            shape = "a list" if isinstance(node, yaml.SequenceNode) else "a mapping"
            raise self.fail(node, f"{where}: keys must be text, not {shape}")
        key = self._scalar(node, where)
        if not isinstance(key, str):
            raise self.fail(node, f"{where}: keys must be text, not {key!r} (quote it)")
        if key in seen:
            raise self.fail(node, f"{where}: duplicate key {key!r}")
        return key

    def _scalar(self, node: yaml.Node, where: str) -> Any:
        try:
            return self._loader.construct_object(node, deep=True)
        except (ValueError, yaml.YAMLError) as exc:
            hint = " (a date is YYYY-MM-DD)" if node.tag.endswith(":timestamp") else ""
            raise self.fail(node, f"{where}: invalid value {node.value!r}: {exc}{hint}") from None

    # Validation, and its errors told where they stand
    def validate(
        self, model: type[Model], root: yaml.Node, name: str, context: Any = None
    ) -> Model:
        """``root`` validated by ``model``; the first mistake in the file raises ``error``."""
        data = self.plain(root, name)
        try:
            return model.model_validate(data, strict=True, context=context)
        except ValidationError as exc:
            errors = exc.errors(include_url=False)
        placed = [(self._place(root, e["loc"], e["type"]), e) for e in errors]
        (node, where), first = min(placed, key=lambda p: _position(p[0][0], p[1]))
        label = where or name
        if first["type"] == "missing":
            names = sorted(
                str(e["loc"][-1])
                for e in errors
                if e["type"] == "missing" and e["loc"][:-1] == first["loc"][:-1]
            )
            told = [self.missing.get(n) for n in names]
            message = next((m for m in told if m), f"missing {', '.join(names)}")
            raise self.fail(node, f"{label}: {message}")
        raise self.fail(node, f"{label}: {self._explain(model, first, node)}")

    def _place(self, root: yaml.Node, loc: Sequence[int | str], kind: str) -> tuple[yaml.Node, str]:
        """The node an error is about, and the path its message names."""
        if loc and loc[-1] == "[key]":  # a mapping key that is not valid: its own node
            loc, kind = loc[:-1], "extra_forbidden"
        node, key = self._walk(root, loc)
        if kind == "extra_forbidden" and key is not None:
            return key, _path(loc[:-1])
        return node, _path(loc[:-1] if kind == "missing" else loc)

    def node_at(self, root: yaml.Node, loc: Sequence[int | str]) -> yaml.Node:
        """The value at ``loc`` (keys and list indices), or the deepest one on its way."""
        return self._walk(root, loc)[0]

    def _walk(
        self, root: yaml.Node, loc: Sequence[int | str]
    ) -> tuple[yaml.Node, yaml.Node | None]:
        node, key = root, None
        for part in loc:
            if isinstance(node, yaml.MappingNode):
                pair = next((p for p in node.value if p[0].value == part), None)
                if pair is None:
                    break
                key, node = pair
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
                key, node = None, node.value[part]
            else:
                break
        return node, key

    def _explain(self, model: type[BaseModel], error: ErrorDetails, node: yaml.Node) -> str:
        kind, loc = error["type"], error["loc"]
        if kind == "input":  # raised by a validator below, in this module's words
            return error["msg"]
        if kind == "extra_forbidden":
            parent, _ = _field_at(model, loc[:-1])
            known = ", ".join(sorted(parent.model_fields)) if _is_model(parent) else "none"
            return f"unknown key {loc[-1]!r} (known: {known})"
        annotation, field = _field_at(model, loc)
        constraints = _bounds(field)
        if annotation is int:
            if kind == "less_than_equal":
                return f"at most {constraints.get('le')}"
            return f"expected a whole number of {constraints.get('ge', 0)} or more"
        if annotation is float:
            if kind == "finite_number":
                return f"expected a number, not {node.value!r}"
            bounds = _number_bounds(constraints, kind)
            value = error.get("input")
            got = f", not {value:g}" if kind != "float_type" and _is_number(value) else ""
            return f"expected a number {bounds}{got}"
        return SHAPES.get(kind, error["msg"])


Model = TypeVar("Model", bound=BaseModel)

TEXT_EXPECTED = "expected text (quote it if it looks like a number)"
SHAPES = {
    "bool_type": "expected true or false",
    "string_type": TEXT_EXPECTED,
    "dict_type": "expected a mapping",
    "model_type": "expected a mapping",
    "list_type": "expected a list",
    "too_short": "the list is empty",
}


class InputModel(BaseModel):
    """A section of a file people write: every key known, every value of its own type."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def problem(message: str) -> PydanticCustomError:
    """A validator's error, told to the user as it is (after the path and line)."""
    return PydanticCustomError("input", "{message}", {"message": message})


def _text(value: str) -> str:
    if not value.strip():
        raise problem(TEXT_EXPECTED)
    if "\0" in value:
        raise problem("a NUL character (\\0) is not allowed in text")
    return value


def _day(value: Any) -> Any:
    """A date, unquoted (YAML makes it) or quoted; never a date with a time."""
    if isinstance(value, date) and not isinstance(value, datetime):
        return value
    if isinstance(value, str):
        try:
            return date.fromisoformat(value)
        except ValueError:
            pass
    raise problem("expected a date as YYYY-MM-DD")


# Text that says something: not blank, no NUL.
Text = Annotated[str, AfterValidator(_text)]
Day = Annotated[date, BeforeValidator(_day)]


def _position(node: yaml.Node, error: ErrorDetails) -> int:
    """Where an error stands in the file. A missing key is noticed where its mapping
    ends, so that a misspelt key ("servr") is named before the one it leaves missing."""
    return (node.end_mark if error["type"] == "missing" else node.start_mark).index


def _path(loc: Sequence[int | str]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f".{part}" if out else str(part)
    return out


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _field_at(model: type[BaseModel], loc: Sequence[int | str]) -> tuple[Any, FieldInfo | None]:
    """The annotation (without Optional or Annotated) and field that ``loc`` leads to."""
    annotation: Any = model
    field: FieldInfo | None = None
    for part in loc:
        if _is_model(annotation) and isinstance(part, str) and part in annotation.model_fields:
            field = annotation.model_fields[part]
            annotation = field.annotation
        elif get_origin(annotation) in (list, tuple, dict):
            field, annotation = None, get_args(annotation)[-1]
        else:
            return None, None
        annotation = _bare(annotation)
    return annotation, field


def _bare(annotation: Any) -> Any:
    if get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    if get_origin(annotation) in (Union, UnionType):
        annotation = next(a for a in get_args(annotation) if a is not NoneType)
    return annotation


def _bounds(field: FieldInfo | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in field.metadata if field is not None else ():
        for name, kind in (("ge", annotated_types.Ge), ("gt", annotated_types.Gt)):
            if isinstance(item, kind):
                out[name] = getattr(item, name)
        if isinstance(item, annotated_types.Le):
            out["le"] = item.le
    return out


def _number_bounds(bounds: dict[str, Any], kind: str) -> str:
    if kind == "greater_than":  # at or below a bound that is itself refused
        return f"above {bounds['gt']:g}"
    low, high = bounds.get("ge", bounds.get("gt", 0.0)), bounds.get("le", math.inf)
    return f"from {low:g} to {high:g}" if high < math.inf else f"of {low:g} or more"
