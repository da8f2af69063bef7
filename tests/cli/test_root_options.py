"""One table of root options (issue #35 item 6, symfonic_cli/cli/rootspec.py): the typer root, the
copies every command gets, the argv readers and TAB completion read it, and the click tree the
command line runs is exactly that table."""

from __future__ import annotations

import click
from typer.main import get_command

from symfonic_cli.cli import app, fast, rootspec
from symfonic_cli.cli.root import build_app
from symfonic_cli.cli.rootopts import _GLOBAL_COPIES, everywhere


def _root() -> click.Group:
    root = get_command(build_app(None))
    everywhere(root)
    return root


def test_the_click_root_is_the_table():
    root = _root()
    options = {p.name: p for p in root.params if isinstance(p, click.Option)}
    typer_own = {o for p in options.values() for o in p.opts if o in rootspec.TYPER_ROOT_ONLY}
    assert typer_own == set(rootspec.TYPER_ROOT_ONLY)
    ours = {name: p for name, p in options.items() if not set(p.opts) & set(rootspec.TYPER_ROOT_ONLY) and name != "help"}
    assert set(ours) == set(rootspec.ROOT_OPTIONS)
    for name, p in ours.items():
        spec = rootspec.ROOT_OPTIONS[name]
        assert tuple(p.opts) == spec["opts"] and p.help == spec["help"] and p.envvar == spec.get("env"), name
        assert p.is_flag == (spec["kind"] == "flag"), name


def test_every_argv_reader_and_completion_read_the_table():
    root = _root()
    takes_value = {o for p in root.params if isinstance(p, click.Option) and not p.is_flag for o in p.opts}
    assert app._VALUE_OPTIONS == takes_value - set(rootspec.TYPER_ROOT_ONLY)
    from symfonic_cli import complete

    assert complete.ROOT_ONLY == rootspec.ROOT_ONLY and complete._CONNECTION == rootspec.CONNECTION
    assert set(fast.ROOT_AFTER) <= {o for spec in rootspec.ROOT_OPTIONS.values() for o in spec["opts"]}
    # Each command has a copy of every root option but the root's own (the store ones where it opens one).
    listing = root.commands["threads"].commands["list"]
    copies = {p.name for p in listing.params if p in _GLOBAL_COPIES}
    assert copies == {n for n, s in rootspec.ROOT_OPTIONS.items() if not s.get("root_only")}
    demo = root.commands["demo"]
    assert {p.name for p in demo.params if p in _GLOBAL_COPIES}.isdisjoint(rootspec.STORE_ONLY)


def test_a_root_option_with_a_value_is_skipped_when_finding_the_command():
    # --aes-key-file takes a value: its value is no command name (the reader once loaded every group).
    assert app._command_name(["--aes-key-file", "key.bin", "threads", "list"]) == "threads"
    assert app._command_name(["--tz", "UTC", "--color", "never", "store", "info"]) == "store"
    assert app._names_no_command(["--aes-key-file", "key.bin"])
