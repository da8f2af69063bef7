"""At the terminal, the rest of issue #15: what a person sees of ``thread show/history/diff`` and
``migrate --dry-run`` at 80 and 120 columns (every key, checkpoint id and time whole on one line),
no escape byte under NO_COLOR from any command (migrate's progress included), an empty listing
said on stderr, values case-insensitive on both routes, and the pager's setting kept on the
Environment. Screens come from the real binary on a pseudo-terminal."""

from __future__ import annotations

import json
import re

import pytest

from tests.support.cli import run
from tests.support.terminal import on_terminal

KEY = "acme:_:s-001"
ESC = "\x1b"


def _lines(screen: str) -> list[str]:
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen).splitlines()


def _whole(screen: str, values) -> None:
    lines = _lines(screen)
    for value in values:
        assert any(value in line for line in lines), (value, screen)


def _shown(ts: str) -> str:
    """thread history's table time: the stored time whole, UTC written with Z."""
    return ts[:-6] + "Z" if ts.endswith("+00:00") else ts


@pytest.mark.parametrize("cols", [80, 120])
def test_thread_views_keep_ids_and_times_whole(any_kind, cols):
    url = any_kind.new_store()
    state = json.loads(run("thread", "show", "-s", url, "-t", KEY, "-f", "json").out)
    code, screen = on_terminal("thread", "show", "-s", url, "-t", KEY, "--no-pager", cols=cols, rows=500)
    assert code == 0, screen
    _whole(screen, [KEY, state["checkpoint_id"], state["first_activity"], state["last_activity"]])
    assert not re.search(r"\+00:00", screen)  # one form for UTC: Z

    history = json.loads(run("thread", "history", "-s", url, "-t", KEY, "-f", "json").out)
    code, screen = on_terminal("thread", "history", "-s", url, "-t", KEY, "--no-pager", "--absolute-time", cols=cols, rows=900)
    assert code == 0, screen
    _whole(screen, [KEY] + [e["checkpoint_id"] for e in history] + [_shown(e["ts"]) for e in history])
    _whole(screen, [e["parent_checkpoint_id"] for e in history if e["parent_checkpoint_id"]])

    first, last = history[-1]["checkpoint_id"], history[0]["checkpoint_id"]
    diff = json.loads(run("thread", "diff", "-s", url, "-t", KEY, first, last, "-f", "json").out)
    code, screen = on_terminal("thread", "diff", "-s", url, "-t", KEY, first, last, "--no-pager", cols=cols, rows=900)
    assert code == 0, screen
    ids = [m["id"] for m in diff["messages"]["added"]]
    assert ids
    stamps = [diff[end]["ts"].replace("+00:00", "Z") for end in ("from", "to")]
    _whole(screen, [first, last] + ids + stamps)
    assert max(len(line) for line in _lines(screen)) <= cols


@pytest.mark.parametrize("cols", [80, 120])
def test_migrate_dry_run_keeps_keys_whole(any_kind, tmp_path, cols):
    url = any_kind.new_store()
    keys = [r["key"] for r in json.loads(run("threads", "list", "-s", url, "-f", "json").out)]
    code, screen = on_terminal("migrate", "--from", url, "--to", str(tmp_path / "new.db"), "--all", "--dry-run",
                               "--init-target", cols=cols, rows=900)
    assert code == 0, screen
    _whole(screen, keys)
    # The plan's rows fit the screen, each key whole on its own line (a table, or records where
    # the columns do not fit; the title and stderr's notes name paths and are the terminal's to wrap).
    plan = [line for line in _lines(screen) if any(k in line for k in keys)]
    assert len(plan) >= len(keys) and max(len(line) for line in plan) <= cols
    assert not (tmp_path / "new.db").exists()


def _every_command(store: str, tmp_path) -> list[tuple[str, ...]]:
    history = json.loads(run("thread", "history", "-s", store, "-t", KEY, "-f", "json").out)
    first, last = history[-1]["checkpoint_id"], history[0]["checkpoint_id"]
    return [
        ("--help",),
        ("threads", "list", "--help"),
        ("threads", "list", "-s", store),
        ("threads", "list", "-s", store, "--status", "done", "--with-size"),
        ("store", "info", "-s", store),
        ("store", "list"),
        ("transcript", "show", "-s", store, "-t", KEY, "--tools"),
        ("thread", "show", "-s", store, "-t", KEY),
        ("thread", "history", "-s", store, "-t", KEY),
        ("thread", "diff", "-s", store, "-t", KEY, first, last),
        ("compat", "show", "-s", store, "-t", KEY),
        ("compat", "report", "-s", store),
        ("compat", "report", "-s", store, "--by-thread"),
        ("thread", "erase", "-s", store, "-t", KEY, "--dry-run"),
        ("thread", "export", "-s", store, "-t", KEY, "--output", str(tmp_path / "bundle")),
        ("migrate", "--from", store, "--to", str(tmp_path / "copy.db"), "--all", "--dry-run", "--init-target"),
        ("migrate", "--from", store, "--to", str(tmp_path / "copy.db"), "--all", "--init-target"),
        ("completion", "show", "bash"),
        ("threads", "list", "-s", store, "--format", "yaml"),  # an error line too
    ]


def test_no_color_means_no_escape_byte_from_any_command(sqlite_store, tmp_path):
    for args in _every_command(str(sqlite_store), tmp_path):
        code, screen = on_terminal(*args, "--no-pager" if len(args) > 1 and args[0] != "completion" else "--help",
                                   cols=100, rows=900, env={"NO_COLOR": "1", "HOME": str(tmp_path)})
        assert code == (2 if "yaml" in args else 0), (args, screen)
        assert ESC not in screen, (args, screen[:400])
    # The migrate above really ran (its progress was on the terminal) and copied every thread;
    # the export wrote its bundle.
    listed = lambda url: {r["key"] for r in json.loads(run("threads", "list", "-s", url, "-f", "json").out)}  # noqa: E731
    assert listed(str(tmp_path / "copy.db")) == listed(str(sqlite_store))
    assert (tmp_path / "bundle" / "manifest.json").exists()


def test_migrate_progress_is_plain_under_no_color(sqlite_master, tmp_path):
    """Colour allowed, the live bar draws (with escapes); NO_COLOR, a plain line, then nothing."""
    code, screen = on_terminal("migrate", "--from", str(sqlite_master), "--to", str(tmp_path / "a.db"), "--all",
                               "--init-target", cols=100)
    assert code == 0 and ESC in screen and "threads" in screen
    code, screen = on_terminal("migrate", "--from", str(sqlite_master), "--to", str(tmp_path / "b.db"), "--all",
                               "--init-target", cols=100, env={"NO_COLOR": "1"})
    assert code == 0 and ESC not in screen
    assert re.search(r"\rthreads \d+/\d+, \d+ checkpoints", screen), screen


def test_empty_listing_says_so_on_a_terminal(any_kind):
    url = any_kind.new_store()
    total = len(json.loads(run("threads", "list", "-s", url, "-f", "json").out))
    for extra, said in (
        (("--tenant", "nobody-here"), "--tenant 'nobody-here'"),
        (("--tenant", "acme", "--status", "interrupted"), "--status 'interrupted'"),
        (("--session", "no-such-session"), "--session 'no-such-session'"),
        (("--inactive-since", "2000-01-01"), "last activity before 2000-01-01T00:00:00Z"),
    ):
        code, screen = on_terminal("threads", "list", "-s", url, *extra, "--no-pager", cols=120)
        assert code == 0, screen
        assert "symfonic: no threads match (" in screen and said in screen, screen
        assert f"the store holds {total} threads" in screen
        # Off a terminal (in-process streams are no terminal): nothing but the document.
        piped = run("threads", "list", "-s", url, *extra, "-f", "json")
        assert (piped.code, piped.out, piped.err) == (0, "[]\n", "")
        piped = run("threads", "list", "-s", url, *extra)
        assert piped.code == 0 and piped.err == "" and len(piped.out.splitlines()) == 1  # the header alone
    # --limit 0 asks for nothing: nothing to say.
    code, screen = on_terminal("threads", "list", "-s", url, "--limit", "0", "--no-pager", cols=120)
    assert code == 0 and "no threads match" not in screen


def _case_lines(store: str) -> list[tuple[tuple[str, ...], str, str]]:
    """(command, option, value in lower case): every option whose value is a word from a list."""
    return [
        (("threads", "list", "-s", store), "--format", "json"),
        (("threads", "list", "-s", store), "-f", "jsonl"),
        (("threads", "list", "-s", store, "-f", "json"), "--status", "done"),
        (("threads", "list", "-s", store, "-f", "json"), "--sort", "checkpoints"),
        (("threads", "list", "-s", store, "-f", "json", "--with-size"), "--sort", "size"),
        (("store", "info", "-s", store), "--format", "json"),
        (("transcript", "show", "-s", store, "-t", KEY), "--format", "json"),
        (("transcript", "show", "-s", store, "-t", KEY, "-f", "json"), "--speaker", "user"),
        (("transcript", "show", "-s", store, "-t", KEY, "-f", "json"), "--speaker", "user,assistant"),
        (("thread", "show", "-s", store, "-t", KEY), "--format", "json"),
        (("thread", "history", "-s", store, "-t", KEY), "--format", "jsonl"),
        (("compat", "show", "-s", store, "-t", KEY), "--format", "json"),
        (("compat", "report", "-s", store), "--format", "text"),
        (("thread", "erase", "-s", store, "-t", KEY, "--dry-run"), "--format", "json"),
        (("store", "list"), "--format", "json"),
        (("threads", "list", "-s", store, "-f", "text"), "--color", "never"),
    ]


def _variants(value: str) -> list[str]:
    return [value.upper(), value.capitalize(), value.swapcase() if value.islower() else value]


def test_values_are_case_insensitive_everywhere(sqlite_master):
    """Each option's value in lower case, UPPER case and Mixed case gives the same output, on the
    quick route and on typer's (a root option before the command sends it there)."""
    s = str(sqlite_master)
    for command, option, value in _case_lines(s):
        for route in ((), ("--connect-timeout", "10")):
            ref = run(*route, *command, option, value)
            assert ref.code == 0, (command, option, ref.err)
            for other in _variants(value):
                got = run(*route, *command, option, other)
                if "erase" in command:  # the plan's receipt-free JSON holds the time it was made
                    got_doc, ref_doc = json.loads(got.out), json.loads(ref.out)
                    got_doc.pop("now", None), ref_doc.pop("now", None)
                    assert (got.code, got_doc.keys()) == (0, ref_doc.keys()), (command, option, other, got.err)
                    continue
                assert (got.code, got.out, got.err) == (0, ref.out, ref.err), (route, command, option, other)
        bad = run(*command, option, value + "x")
        assert bad.code == 2 and bad.err.count("\n") == 1, (command, option, bad)


def test_pager_setting_lives_on_the_environment(sqlite_master, tmp_path):
    from symfonic_cli import pager
    from symfonic_cli.environment import Environment

    assert not hasattr(pager, "disabled")
    assert Environment().pager is True and Environment().color == "auto" and Environment().tz is None
    # --no-pager before or after the command name: the fake pager never starts.
    log = tmp_path / "paged.log"
    fake = tmp_path / "pager.sh"
    fake.write_text(f"#!/bin/sh\necho paged >> {log}\ncat > /dev/null\n")
    fake.chmod(0o755)
    args = ("thread", "history", "-s", str(sqlite_master), "-t", KEY)
    for argv in (("--no-pager", *args), (*args, "--no-pager")):
        code, screen = on_terminal(*argv, cols=120, rows=10, env={"PAGER": str(fake)})
        assert code == 0 and not log.exists() and KEY in screen, argv
    code, screen = on_terminal(*args, cols=120, rows=10, env={"PAGER": str(fake)})
    assert code == 0 and log.read_text() == "paged\n"
    # One run's settings do not leak into the next one in the same process.
    from tests.support.environment import MockEnvironment, run_in

    first = run_in("threads", "list", "-s", str(sqlite_master), "--no-pager", "--color", "never", "--tz", "Asia/Tokyo").env
    assert (first.pager, first.color, first.tz) == (False, "never", "Asia/Tokyo")  # the run's own Environment
    second = run_in("threads", "list", "-s", str(sqlite_master), env=MockEnvironment()).env
    assert (second.pager, second.color, second.tz) == (True, "auto", None)


def test_an_error_after_output_is_the_last_line_on_the_screen(sqlite_store):
    """compat report prints its report, then exits 5 naming the findings: on a terminal (where
    the output is held for the pager) the report comes first and the error line last, as written."""
    code, screen = on_terminal("compat", "report", "-s", str(sqlite_store), "--fail-on", "legacy", cols=120, rows=60,
                               env={"NO_COLOR": "1"})
    assert code == 5, screen
    lines = [line for line in screen.splitlines() if line.strip()]
    assert lines[-1].startswith("symfonic: error: compat report: findings named by --fail-on present (legacy:"), lines[-3:]
    assert sum(line.startswith("symfonic: error:") for line in lines) == 1
    assert any("envelope key" in line for line in lines[:-1])  # the report, once, above it
    assert sum("envelope key" in line for line in lines) == 1
