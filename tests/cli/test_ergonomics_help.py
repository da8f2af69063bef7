"""Issue #37, item 7: a command's help leads with its usage, summary and examples, then its own
options, the global options once at the end. Read on a pseudo-terminal at 80 and 120 columns and
on a pipe."""

from __future__ import annotations

import re

import pytest

from tests.support.cli import run_process
from tests.support.terminal import on_terminal

COMMANDS = [("thread", "show"), ("transcript", "show"), ("threads", "list"), ("thread", "erase")]


def _order(text: str) -> list[int]:
    plain = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text)
    return [plain.find(h) for h in ("Usage:", "Examples:", "\nOptions:", "\nGlobal options:")]


@pytest.mark.parametrize("words", COMMANDS, ids=[" ".join(w) for w in COMMANDS])
def test_examples_come_before_the_options_and_global_options_last(words):
    for cols in (80, 120):
        code, screen = on_terminal(*words, "--help", "--no-pager", cols=cols, rows=300)
        assert code == 0, screen
        where = _order(screen)
        assert -1 not in where and where == sorted(where), (cols, where)
        assert screen.count("Global options:") == 1
    piped = run_process(*words, "--help")
    where = _order(piped.out)
    assert piped.code == 0 and -1 not in where and where == sorted(where)
    # The examples of a one-thread command give the key as its argument.
    if words != ("threads", "list"):
        examples = piped.out[piped.out.index("Examples:"):piped.out.index("\nOptions:")]
        assert re.search(r" acme:_:s-001\b", examples) and "-t acme" not in examples and "--thread acme" not in examples


@pytest.mark.parametrize("cols", [80, 120])
def test_store_list_without_a_config_says_where_it_goes_and_shows_an_entry(tmp_path, cols):
    """Issue #37, item 10: no config file: the path it goes to and an example entry, on a terminal
    (on stderr); a pipe gets the empty listing only (an empty answer is an answer)."""
    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    code, screen = on_terminal("store", "list", "--no-pager", cols=cols, env=env)
    assert code == 0, screen
    flat = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", screen)
    assert "no stores configured in" in flat and "config.toml" in flat
    assert "[stores.prod]" in flat and 'url = "postgresql://' in flat and "symfonic threads list -s prod" in flat
    piped = run_process("store", "list", env=env)
    assert piped.code == 0 and piped.out == "name\tkind\turl\n" and piped.err == ""
