"""Help and stores by name at the terminal (issue #15): bare groups print their help, root options
work after the command, `store list`, and a mistyped store name gets the nearest one."""

from __future__ import annotations

import json
import re

import pytest

from tests.support.cli import run, run_process
from tests.support.terminal import on_terminal


@pytest.mark.parametrize("argv", [(), ("transcript",), ("thread",), ("threads",), ("store",), ("compat",), ("completion",)])
def test_a_bare_group_prints_its_help(argv):
    for cols in (80, 120):
        code, screen = on_terminal(*argv, cols=cols)
        assert code == 0, screen
        lines = screen.splitlines()
        assert lines[0].startswith("Usage: symfonic") and "Commands:" in lines and "\\n" not in screen
        assert max(len(line) for line in lines) <= cols
    assert run(*argv).code == 0


def test_usage_errors_stay_one_line():
    res = run_process("threads", "list", "--frobnicate")
    assert res.code == 2 and len(res.err.splitlines()) == 1 and res.err.startswith("symfonic: error:")


def test_root_options_after_the_command(sqlite_master):
    url = str(sqlite_master)
    before = run("--connect-timeout", "5", "threads", "list", "-s", url, "-f", "json")
    after = run("threads", "list", "-s", url, "-f", "json", "--connect-timeout", "5", "--debug", "--pg-schema", "x", "--color", "never")
    assert before.code == after.code == 0 and json.loads(before.out) == json.loads(after.out)
    assert run("threads", "list", "-s", url, "--connect-timeout", "0").code == 2  # checked there too
    help_text = run("transcript", "show", "--help").out
    for option in ("--debug", "--connect-timeout", "--pg-schema", "--checkpoint-collection", "--writes-collection", "--color", "--no-pager"):
        assert option in help_text
    # --debug after the command shows the traceback a failure would hide.
    res = run_process("threads", "list", "-s", str(sqlite_master.parent / "missing.db"), "--debug")
    assert res.code != 0 and "Traceback" in res.err


def _config(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text('[stores.demo]\nurl = "/tmp/demo.db"\n\n[stores.prod]\nurl = "postgresql://support:hunter2@db.internal/agents"\n')
    return {"SYMFONIC_CONFIG": str(path)}


def test_store_list_masks_passwords(tmp_path):
    env = _config(tmp_path)
    res = run("store", "list", "-f", "json", env=env)
    assert res.code == 0
    assert json.loads(res.out) == [
        {"name": "demo", "kind": "sqlite", "url": "/tmp/demo.db"},
        {"name": "prod", "kind": "postgres", "url": "postgresql://support:***@db.internal/agents"},
    ]
    code, screen = on_terminal("store", "list", cols=80, env=env)
    assert code == 0 and "hunter2" not in screen and "postgresql://support:***@db.internal/agents" in screen


def test_a_mistyped_store_name_gets_the_nearest(tmp_path, sqlite_master):
    env = _config(tmp_path)
    res = run("threads", "list", "--store", "dem", env=env)
    assert res.code == 2 and len(res.err.splitlines()) == 1
    assert "no store named 'dem'" in res.err and "did you mean 'demo'?" in res.err and "demo, prod" in res.err
    assert "hunter2" not in res.err
    res = run("threads", "list", "--store", "zzzzzz", env=env)
    assert res.code == 2 and "did you mean" not in res.err and "configured stores: demo, prod" in res.err
    # A path (or a file that exists) is still a path.
    assert run("threads", "list", "--store", str(sqlite_master), env=env).code == 0
    assert "no SQLite file" in run("threads", "list", "--store", "./dem", env=env).err


def _commands():
    import click
    from typer.main import get_command

    from symfonic_cli.cli.app import GROUPS  # noqa: F401
    from symfonic_cli.cli.helptext import describe
    from symfonic_cli.cli.root import build_app
    from symfonic_cli.cli.rootopts import everywhere

    root = get_command(build_app(None))
    everywhere(root)
    describe(root)
    out = []

    def visit(cmd, path):
        if isinstance(cmd, click.Group):
            for name, sub in cmd.commands.items():
                visit(sub, (*path, name))
        else:
            out.append((path, cmd))

    visit(root, ())
    return out


def test_every_command_has_examples_and_described_options():
    commands = dict(_commands())
    assert ("demo",) in commands and ("transcript", "show") in commands and ("store", "list") in commands
    for path, cmd in commands.items():
        for p in cmd.params:
            assert getattr(p, "help", None), (path, p.name)
        res = run(*path, "--help", env={"COLUMNS": "200"})
        assert res.code == 0, path
        text = res.out
        examples = text.split("Examples:", 1)[1].strip().splitlines() if "Examples:" in text else []
        runnable = [line.strip() for line in examples if line.strip().startswith("symfonic ")]
        assert 2 <= len(runnable) <= 4, (path, text)
        assert all(line.startswith("symfonic " + " ".join(path)) or line.startswith("symfonic demo") for line in runnable), path
        if "arguments:" in text.lower():
            args = text.lower().split("arguments:", 1)[1].split("\n\n", 1)[0]
            heads = [line for line in args.splitlines() if line.startswith("  ") and not line.startswith("   ")]
            assert heads and all(len(re.split(r"\s{2,}", line.strip())) >= 2 for line in heads), (path, args)
        if "--format" in text:
            from symfonic_cli.vocabulary import metavar, option_words

            assert metavar(option_words(path, "--format")) in text, path  # [table|text|json|jsonl], csv on the record commands
    assert "[user|assistant|tool|system|other|all]" in run("transcript", "show", "--help", env={"COLUMNS": "200"}).out


def test_thread_group_describes_every_command():
    text = run("thread", "--help", env={"COLUMNS": "200"}).out
    assert "erase it." not in text.split("Options:")[0].replace("erasing it", "")
    for name in ("show", "history", "diff", "erase"):
        assert f"  {name} " in text


def test_commands_are_listed_in_the_order_people_work():
    def listed(*argv):
        text = run(*argv, "--help", env={"COLUMNS": "200"}).out.split("Commands:", 1)[1].split("\n\n", 1)[0]
        return [line.split()[0] for line in text.splitlines() if line.startswith("  ") and not line.startswith("   ") and line.strip()]

    assert listed() == ["transcript", "threads", "thread", "browse", "store", "compat", "migrate", "mcp", "demo", "completion"]
    assert listed("thread") == ["show", "history", "diff", "rewind", "export", "erase", "prune"]
    assert listed("store") == ["info", "usage", "list"]
    assert listed("compat") == ["report", "show"]


GROUPS = [(), ("transcript",), ("threads",), ("thread",), ("store",), ("compat",), ("completion",)]


def _listing(screen: str) -> dict[str, str]:
    """A help screen's Commands section: each command's summary, its wrapped lines joined."""
    found: dict[str, str] = {}
    name = None
    for line in re.sub(r"\x1b\[[0-9;]*m", "", screen).split("Commands:", 1)[1].split("\n\n", 1)[0].splitlines():
        if line.startswith("  ") and not line.startswith("   "):
            name, _, text = line.strip().partition(" ")
            found[name] = text.strip()
        elif line.strip() and name is not None:
            found[name] += " " + line.strip()
    return found


@pytest.mark.parametrize("cols", [80, 120])
def test_group_summaries_are_whole_sentences(cols):
    """Issue #37 item 7: a group's help lists each command with the first sentence of its own
    help, whole (click cut it at about 45 characters with '...'), on a terminal of 80 and 120
    columns and in a pipe."""
    from symfonic_cli.cli.helptext import summary

    for argv in GROUPS:
        code, screen = on_terminal(*argv, "--help", cols=cols, rows=100)  # one screen: not paged
        assert code == 0, screen
        listing = _listing(screen)
        assert listing and "..." not in screen.split("Commands:", 1)[1], (argv, screen)
        for name, text in listing.items():
            own = run(*argv, name, "--help", env={"COLUMNS": "2000"}).out
            body = " ".join(own.split("\n\n", 2)[1].split())  # the help after the usage line
            assert text == summary(body) and body.startswith(text[:-1]), (argv, name, text)
            assert text.endswith((".", ")")), (argv, name, text)
        assert max(len(line) for line in screen.splitlines()) <= cols
    piped = run_process("thread", "--help")
    assert _listing(piped.out) == _listing(on_terminal("thread", "--help", cols=80, rows=100)[1])


def test_summary_is_the_first_sentence():
    from symfonic_cli.cli.helptext import summary

    assert summary("One row (a. b. c). Then more.") == "One row (a. b. c)."
    assert summary("Only one sentence\nover two lines") == "Only one sentence over two lines"
    assert summary("First. Second.\n\nA paragraph.") == "First."
