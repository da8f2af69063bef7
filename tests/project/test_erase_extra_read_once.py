"""An erase's ``erase_extra`` tables (the store's config entry) are validated once, by the request
that holds them (erase/params.py ``EraseRequest.extra``): the check before the store is opened and
both drivers (erase/run.py, erase/sweep.py) read them there, none parses the entry again."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "symfonic_cli"


def test_the_extra_tables_are_parsed_in_one_place():
    calls = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "parse_extra":
                calls.append(path.relative_to(PACKAGE).as_posix())
    assert calls == ["erase/params.py"]
