"""gpuaudit.toml: the options of a job in one file (docs/scheduling.md).

The file holds the global options at its top level and each command's options in
a table named after it (``[scan]``), keyed by their long names without the
dashes (``output-dir = "reports"``). It is read strictly: an unknown key or a
value of the wrong type raises ConfigError naming the file and line, so that a
misspelt option never silently falls back to its default. What the command line
does with the values (and the precedence of the command line and the
environment over them) is the command line's business; this module only finds,
reads and checks the file.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import platformdirs

FILE_NAME = "gpuaudit.toml"
Kind = Literal["flag", "count", "list", "value"]


class ConfigError(ValueError):
    """A configuration file that cannot be used; the message is FILE:LINE: what is wrong."""


@dataclass(frozen=True)
class Key:
    """One option a key may set: the option's name, its kind, and a converter that
    raises ValueError with a one-line reason for a value the option refuses."""

    option: str
    kind: Kind
    convert: Callable[[Any], Any] = lambda value: value
    as_list: bool = False  # a value the command line takes as a list of one


@dataclass
class Loaded:
    """A read configuration: ``values`` by option name, a table per command;
    ``lines`` where each was given, by (table or "", option name)."""

    path: Path
    values: dict[str, Any] = field(default_factory=dict)
    lines: dict[tuple[str, str], int] = field(default_factory=dict)


def locate(given: str | None, cwd: Path) -> Path | None:
    """The file to read: ``given`` (which must exist), else gpuaudit.toml in ``cwd``,
    else in the user's configuration folder ($XDG_CONFIG_HOME/gpuaudit on Linux)."""
    if given:
        path = Path(given)
        if not path.is_file():
            raise ConfigError(f"{given}: no such configuration file")
        return path
    for path in (cwd / FILE_NAME, user_file()):
        if path.is_file():
            return path
    return None


def load(path: Path, top: Mapping[str, Key], tables: Mapping[str, Mapping[str, Key]]) -> Loaded:
    """Read ``path``: ``top`` are the keys allowed at the top level, ``tables`` the keys
    of each command's table."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigError(f"{path}: cannot read: {reason}") from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"\(at line (\d+), column \d+\)", str(exc))
        # tomllib names no line for a mistake at the end of the document: the last line.
        line = found.group(1) if found else str(text.count("\n") + 1)
        raise ConfigError(f"{path}:{line}: not TOML: {str(exc).split(' (at ')[0]}") from exc
    where = _positions(text)
    loaded = Loaded(path)
    for key, value in data.items():
        if isinstance(value, dict):
            if key not in tables:
                known = ", ".join(f"[{t}]" for t in tables)
                raise ConfigError(f"{path}:{where(key, '')}: unknown table [{key}]; known: {known}")
            options = loaded.values.setdefault(key, {})
            for name, item in value.items():
                option, converted = _checked(path, where(name, key), key, name, item, tables[key])
                options[option] = converted
                loaded.lines[(key, option)] = where(name, key)
        else:
            option, converted = _checked(path, where(key, ""), "", key, value, top)
            loaded.values[option] = converted
            loaded.lines[("", option)] = where(key, "")
    return loaded


def _checked(
    path: Path, line: int, table: str, name: str, value: Any, keys: Mapping[str, Key]
) -> tuple[str, Any]:
    """The option a key sets and its value, or ConfigError at FILE:LINE."""
    at = f"{path}:{line}: {f'[{table}] ' if table else ''}{name}"
    key = keys.get(name)
    if key is None:
        hint = _near(name, keys)
        raise ConfigError(f"{at}: unknown option{hint}")
    if key.kind == "flag" and type(value) is not bool:
        raise ConfigError(f"{at}: expected true or false")
    if key.kind == "count" and (type(value) is not int or value < 0):
        raise ConfigError(f"{at}: expected a count, 0 or more")
    if key.kind == "list" and not isinstance(value, list):
        raise ConfigError(f'{at}: expected a list, e.g. {name} = ["..."]')
    if key.kind == "value" and (isinstance(value, (bool, list, dict)) or value is None):
        raise ConfigError(f"{at}: expected a string or a number")
    try:
        items = value if isinstance(value, list) else [value]
        for item in items:
            if isinstance(item, (list, dict)):
                raise ValueError("expected a list of strings or numbers")
            if key.kind in ("list", "value"):
                key.convert(item)
    except ValueError as exc:
        raise ConfigError(f"{at}: {exc}") from exc
    return key.option, [value] if key.as_list else value


def _near(name: str, keys: Mapping[str, Key]) -> str:
    import difflib

    close = difflib.get_close_matches(name, list(keys), n=1)
    return f" (did you mean {close[0]}?)" if close else ""


_TABLE = re.compile(r"^\s*\[\s*([A-Za-z0-9_-]+)\s*\]")
_KEY = re.compile(r"""^\s*["']?([A-Za-z0-9_-]+)["']?\s*=""")


def _positions(text: str) -> Callable[[str, str], int]:
    """A finder of the line a key (or a table, with table "") is given on."""
    found: dict[tuple[str, str], int] = {}
    table = ""
    for number, line in enumerate(text.splitlines(), start=1):
        header = _TABLE.match(line)
        if header:
            table = header.group(1)
            found.setdefault((table, ""), number)
            continue
        key = _KEY.match(line)
        if key:
            found.setdefault((key.group(1), table), number)

    def where(key: str, in_table: str) -> int:
        return found.get((key, in_table)) or found.get((in_table, ""), 1)

    return where


def environment_name(prefix: str, option: str) -> str:
    """The environment variable of an option under click's automatic prefix."""
    return f"{prefix}_{option.upper()}".replace("-", "_")


def user_file() -> Path:
    """Where the user's own configuration file is looked for."""
    return Path(platformdirs.user_config_dir("gpuaudit")) / FILE_NAME
