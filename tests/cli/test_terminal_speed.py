"""``--help`` stays quick (issue #15): the root's help is built from the command summaries alone,
and says exactly what the full command tree says; no help imports the codecs, the selection
machinery or the renderer. Timings themselves are in benchmarks/bench_terminal.py."""

from __future__ import annotations


import pytest

from tests.support.cli import imports_of, run


def _help_of_full_tree(*args: str) -> str:
    """The help as the full command tree prints it (every command imported and converted)."""
    import io
    from contextlib import redirect_stdout

    from typer.main import get_command

    from symfonic_cli.cli.helptext import describe
    from symfonic_cli.cli.root import build_app
    from symfonic_cli.cli.rootopts import everywhere

    command = get_command(build_app(None))
    everywhere(command)
    describe(command)
    out = io.StringIO()
    with redirect_stdout(out):
        try:
            command.main(args=list(args), prog_name="symfonic", standalone_mode=False)
        except SystemExit:
            pass
    return out.getvalue()


def test_root_help_from_summaries_is_the_full_trees_help():
    quick = run("--help")
    assert quick.code == 0
    assert quick.out == _help_of_full_tree("--help")
    # Bare, and after root options, too.
    assert run().out == quick.out
    assert run("--debug", "--tz", "Europe/Berlin", "--help").out == quick.out


def test_summaries_name_every_command():
    from symfonic_cli.cli.groups import GROUPS, ROOT_COMMANDS, SUMMARIES

    assert set(SUMMARIES) == set(GROUPS) and set(ROOT_COMMANDS) <= set(GROUPS)


@pytest.mark.parametrize("args", [("--help",), ("threads", "list", "--help"), ("transcript", "show", "--help"), ("browse", "--help"), ()])
def test_help_imports_no_codec_selection_or_renderer(args):
    out, loaded, code = imports_of(list(args), ("symfonic_cli.codec.metadata_json", "symfonic_cli.selection", "symfonic_cli.render",
                                                "symfonic_cli.compat.envelope", "langgraph", "rich", "sqlite3", "textual"))
    assert (loaded, code) == ([], 0), out[-400:]


def test_a_root_command_named_after_root_options_still_runs(sqlite_master):
    """Only root options on the line take the summaries' root; a command after them runs."""
    res = run("--tz", "UTC", "--color", "never", "threads", "list", "-s", str(sqlite_master), "-f", "json")
    assert res.code == 0 and '"acme:_:s-001"' in res.out
    # After "--" a word is still the command: the real group (its commands listed), never a summary.
    res = run("--no-pager", "--", "threads")
    assert res.code == 0 and "Commands:\n  list " in res.out
