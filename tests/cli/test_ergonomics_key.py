"""Issue #37, item 1: the thread key as a command's first argument (``gh issue view 123``,
``kubectl describe pod X``), given once, and a command named under the wrong group says which was
meant. Run where a person sees it: the real binary on a pseudo-terminal at 80 and 120 columns, a
pipe (a process), and in-process."""

from __future__ import annotations

import json
import re

import pytest

from tests.support.cli import run, run_process
from tests.support.terminal import on_terminal

KEY = "acme:_:s-001"
# Every command of one thread: its words and what else it needs to read without changing anything.
ONE_THREAD = [
    (("transcript", "show"), ()),
    (("thread", "show"), ()),
    (("thread", "history"), ()),
    (("compat", "show"), ()),
    (("compat", "report"), ()),
    (("thread", "erase"), ("--dry-run",)),
    (("thread", "prune"), ("--dry-run",)),
    (("thread", "rewind"), ("--to", "-2", "--idle-for", "0", "--dry-run")),
]


def _plain(screen: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", screen)


@pytest.mark.parametrize(("words", "extra"), ONE_THREAD, ids=[" ".join(w) for w, _ in ONE_THREAD])
def test_key_argument_reads_what_thread_option_reads(sqlite_master, words, extra):
    store = str(sqlite_master)
    by_option = run(*words, "-s", store, "--thread", KEY, *extra, "-f", "json")
    by_argument = run(*words, "-s", store, KEY, *extra, "-f", "json")
    assert by_option.code == 0, by_option.err
    assert (by_argument.code, by_argument.out) == (0, by_option.out), by_argument.err
    # Given twice (argument and --thread): a usage error, one line, nothing on stdout.
    twice = run(*words, "-s", store, KEY, "--thread", KEY, *extra, "-f", "json")
    assert twice.code == 2 and twice.out == ""
    assert twice.err.count("\n") == 1 and "given twice" in twice.err and "Traceback" not in twice.err


def test_key_argument_on_every_store_kind(any_kind):
    url = any_kind.new_store()
    keys = [r["key"] for r in json.loads(run("threads", "list", "-s", url, "-f", "json").out)]
    for key in keys:
        shown = run("thread", "show", "-s", url, key, "-f", "json")
        assert shown.code == 0, shown.err
        assert json.loads(shown.out)["key"] == key


def test_key_argument_is_exact_and_a_near_miss_is_not_found(sqlite_master):
    # Never trimmed or folded: a key with a space or another case names no thread (exit 3).
    for near in (f" {KEY}", KEY.upper()):
        missed = run("transcript", "show", "-s", str(sqlite_master), near)
        assert missed.code == 3 and missed.out == "", missed.err
        assert KEY in missed.err  # the suggestion names the real key


def test_thread_diff_takes_the_key_before_its_checkpoints(sqlite_master):
    store = str(sqlite_master)
    by_option = run("thread", "diff", "-s", store, "--thread", KEY, "-2", "-1", "-f", "json")
    by_argument = run("thread", "diff", "-s", store, KEY, "-2", "-1", "-f", "json")
    assert by_option.code == 0, by_option.err
    assert (by_argument.code, by_argument.out) == (0, by_option.out)
    for bad in ((KEY, "-1"), (KEY, "--bogus", "-2", "-1"), ("a", KEY, "-2", "-1")):
        wrong = run("thread", "diff", "-s", store, *bad)
        assert wrong.code == 2 and wrong.out == "" and wrong.err.count("\n") == 1, (bad, wrong)


def test_erase_takes_the_key_as_argument(sqlite_store):
    erased = run("thread", "erase", "-s", str(sqlite_store), KEY, "--yes", "-f", "json")
    assert erased.code == 0, erased.err
    left = [r["key"] for r in json.loads(run("threads", "list", "-s", str(sqlite_store), "-f", "json").out)]
    assert KEY not in left and left


@pytest.mark.parametrize("cols", [80, 120])
@pytest.mark.parametrize("color", [True, False])
def test_key_argument_on_a_terminal(sqlite_master, cols, color):
    env = {} if color else {"NO_COLOR": "1"}
    by_option = on_terminal("transcript", "show", "-s", str(sqlite_master), "--thread", KEY, "--no-pager", "--absolute-time", cols=cols, rows=900, env=env)
    by_argument = on_terminal("transcript", "show", "-s", str(sqlite_master), KEY, "--no-pager", "--absolute-time", cols=cols, rows=900, env=env)
    assert by_option[0] == 0 and by_argument == by_option
    assert "What is the status of order 1042?" in _plain(by_argument[1])
    if not color:
        assert "\x1b[" not in by_argument[1]


@pytest.mark.parametrize(("typed", "meant"), [
    (("thread", "list"), "symfonic threads list"),
    (("threads", "show"), "symfonic thread show"),
    (("list",), "symfonic threads list"),
])
def test_a_command_under_the_wrong_group_says_which_was_meant(sqlite_master, typed, meant):
    for cols in (80, 120):
        code, screen = on_terminal(*typed, "-s", str(sqlite_master), cols=cols)
        assert code == 2, screen
        assert f"did you mean '{meant}'?" in _plain(screen).replace("\n", "")
    piped = run_process(*typed, "-s", str(sqlite_master))
    assert piped.code == 2 and piped.out == ""
    assert piped.err.startswith("symfonic: error: ") and f"did you mean '{meant}'?" in piped.err
    assert piped.err.count("\n") == 1
    # A word no group has keeps the plain hint.
    unknown = run("thread", "lsit", "-s", str(sqlite_master))
    assert unknown.code == 2 and "did you mean" not in unknown.err and "symfonic thread --help" in unknown.err
