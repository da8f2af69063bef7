"""A changing command's way to the store is one a reader can follow (issue #46): the command calls
its operation in api/front.py itself, by name, with the ``--store`` it was given (it never hands an
API function over as a value for another module to call), and a ``Front``, what differs between the
command line and the Python API, holds no store: the store travels as the operation's argument."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

CLI = Path(__file__).resolve().parents[2] / "symfonic_cli" / "cli"
COMMANDS = {"prune.py": "prune", "erase.py": "erase", "rewind.py": "rewind", "export.py": "export", "migrate.py": "migrate"}


def _calls_on_api(path: Path) -> dict[str, list[ast.expr]]:
    """Each ``api.<name>(...)`` call of the module: its name -> its arguments."""
    found = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "api":
            found[node.func.attr] = node.args
    return found


@pytest.mark.parametrize("module, operation", sorted(COMMANDS.items()))
def test_each_changing_command_calls_its_operation_by_name(module, operation):
    calls = _calls_on_api(CLI / module)
    assert operation in calls, f"cli/{module} does not call api.{operation}(...)"
    args = calls[operation]
    assert isinstance(args[0], ast.Name) and args[0].id == "front"
    if operation != "migrate":  # migrate's two stores are its --from and --to
        assert isinstance(args[1], ast.Name) and args[1].id == "store", f"cli/{module} hands api.{operation} another value than --store"
    taken = {a.name for node in ast.walk(ast.parse((CLI / module).read_text(encoding="utf-8")))
             if isinstance(node, ast.ImportFrom) and node.module == "symfonic_cli.api.front" for a in node.names}
    assert taken <= {"Front"}, f"cli/{module} takes {sorted(taken - {'Front'})} of api/front.py as values"


def test_a_front_holds_no_store():
    from symfonic_cli.api.front import Front

    assert [f.name for f in dataclasses.fields(Front)] == ["environment", "report", "cli", "connection", "name"]
