"""Each changing operation's parameters are declared once (issue #46): the command's options and
the Python API's keywords are both built from ``<operation>/params.py`` (changes/params.py), so
an option and its keyword cannot drift apart: the same name, default, spelling and range."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from typer.main import get_command

from symfonic_cli import api
from symfonic_cli.api import params

# The command line's own parameters beside the declared ones.
OWN = {"key", "store", "fmt"}
COMMANDS = {"prune": ("thread", "prune"), "erase": ("thread", "erase"), "export": ("thread", "export"),
            "rewind": ("thread", "rewind"), "migrate": ("migrate",)}


def _command(path: tuple[str, ...]):
    from symfonic_cli.cli.root import build_app

    command = get_command(build_app(None))
    for name in path:
        command = command.commands[name]  # type: ignore[attr-defined]
    return command


@pytest.mark.parametrize("operation", sorted(COMMANDS))
def test_the_options_and_the_keywords_are_one_declaration(operation):
    declared = {p.name: p for p in getattr(params, operation.upper())}
    options = {p.name: p for p in _command(COMMANDS[operation]).params}
    assert set(options) - OWN == {n for n, p in declared.items() if p.cli}
    for name, option in options.items():
        if name in OWN:
            continue
        p = declared[name]
        assert tuple(option.opts) + tuple(option.secondary_opts) == p.flags and option.help == p.help, name
        assert option.default == p.default or (option.default is None and p.default is None), name
        if p.low is not None and p.cli_range:
            assert (option.type.min, option.type.max) == (p.low, p.high), name
    signature = inspect.signature(getattr(api, operation)).parameters
    keywords = {n: s for n, s in signature.items() if s.kind is s.KEYWORD_ONLY}
    positional = [n for n, s in signature.items() if s.kind is s.POSITIONAL_OR_KEYWORD]
    assert set(keywords) | set(positional[1:]) >= {n for n, p in declared.items() if p.api} - {"source"}
    for name, keyword in keywords.items():
        assert keyword.default == declared[name].default and keyword.annotation == declared[name].annotation, name
    plan = inspect.signature(getattr(api, f"plan_{operation}"))
    assert plan.parameters  # the plan function takes the same (checked when called)


def test_keep_branches_is_declared_once():
    """A prune parameter's option and keyword are spelled in its declaration alone; what else names
    it decides with it (the keep rules: model/, stores/, prune/lost.py) or records it (the receipt)."""
    root = Path(api.__file__).resolve().parents[1]
    texts = {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in root.rglob("*.py")}
    assert [name for name, text in texts.items() if '"--keep-branches"' in text] == ["prune/params.py"]  # the option's spelling
    typed = sorted(name for name, text in texts.items() if "keep_branches: bool" in text)
    assert all(name.startswith(("model/", "stores/", "prune/lost.py")) for name in typed), typed
