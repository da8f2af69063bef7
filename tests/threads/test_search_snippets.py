"""Issue #37, item 10: search snippets in JSON keep the text (escaped once by JSON itself: an ESC is
``\\u001b`` in JSON, never ``\\\\x1b``); text escapes once; a table escapes for the screen."""

from __future__ import annotations

import json
import re

import pytest

from tests.support.cli import run, run_process
from tests.support.scenarios import ANSI
from tests.support.terminal import on_terminal


def test_json_snippet_is_the_text_itself(sqlite_master):
    res = run("threads", "search", "-s", str(sqlite_master), "RED", "--case-sensitive", "-f", "json")
    assert res.code == 0, res.err
    (hit,) = [h for h in json.loads(res.out) if h["message_id"] == "u-ansi"]
    assert hit["snippet"] == ANSI  # whole: shorter than the snippet's width
    assert "\\\\x1b" not in res.out and "\\\\u" not in res.out and "\x1b" not in res.out  # JSON escapes it, once
    piped = run_process("threads", "search", "-s", str(sqlite_master), "RED", "--case-sensitive")
    line = next(line for line in piped.out.splitlines() if line.startswith("acme:eu:s-003\t") and "\tuser\t" in line)
    snippet = line.split("\t")[-1]
    assert "\x1b" not in snippet and "\\x1b[31mRED" in snippet and "\\\\x1b" not in snippet


@pytest.mark.parametrize("cols", [80, 120])
def test_table_snippet_is_escaped_for_the_screen(sqlite_master, cols):
    code, screen = on_terminal("threads", "search", "-s", str(sqlite_master), "RED", "--case-sensitive", "--no-pager",
                               "--color", "never", cols=cols, rows=200)
    assert code == 0, screen
    assert "\x1b]0;" not in screen and "\x07" not in screen and "RED" in screen
    assert not re.search(r"\\\\x1b", screen)
