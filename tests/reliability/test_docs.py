"""docs/reliability.md names a test for every fault, input and secret: each one exists."""

from __future__ import annotations

import ast
import re

from tests.conftest import ROOT

DOC = ROOT / "docs" / "reliability.md"
REFERENCE = re.compile(r"`(tests/[a-z_/]+\.py)::([a-z0-9_]+)`")


def test_every_test_the_table_names_exists() -> None:
    text = DOC.read_text(encoding="utf-8")
    named = REFERENCE.findall(text)
    assert len(named) > 40
    defined: dict[str, set[str]] = {}
    for path, name in named:
        if path not in defined:
            tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
            defined[path] = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
        assert name in defined[path], f"{path}::{name} is named in {DOC.name} but not defined"


def test_every_reliability_test_is_in_the_table() -> None:
    text = DOC.read_text(encoding="utf-8")
    for path in sorted((ROOT / "tests" / "reliability").glob("test_*.py")):
        if path.name == "test_docs.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        tests = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
        named = [t for t in tests if t.startswith("test_") and f"{path.name}::{t}`" in text]
        assert named, f"no test of {path.name} is in {DOC.name}"
