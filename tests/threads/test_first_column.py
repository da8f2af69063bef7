"""Issue #37, item 5: ``threads list``'s first-message column uses the room the terminal has (it was
cut at 40 characters whatever the width), on one line, ending ``…`` where cut, never inside a
grapheme (a letter and its accent, a flag, a Hangul syllable, an emoji and its modifier) nor
inside an escape. The real binary on pseudo-terminals of 80 and 120 columns, colour on and off; a
pipe keeps the message whole."""

from __future__ import annotations

import re
import sqlite3
import unicodedata
from pathlib import Path

import pytest
from rich.cells import cell_len

from symfonic_cli.render import escape_inline
from symfonic_cli.render.clip import clip, graphemes
from tests.support.cli import run_process
from tests.support.terminal import on_terminal

ESC = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# A whole number of escape_inline's escapes and other characters: never half an escape.
WHOLE_ESCAPES = re.compile(r"(?:\\(?:x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8}|[nt\\])|[^\\])*")

MESSAGES = {
    **{f"acme:_:accent-{k}": "p" * k + "Zoe\u0301 " + "e\u0301" * 200 for k in range(3)},
    **{f"acme:_:flag-{k}": "p" * k + "\U0001f1f3\U0001f1f4\U0001f1f8\U0001f1ea" * 40 for k in range(2)},
    "acme:_:hangul": "\u1100\u1161\u11a8" * 80,
    **{f"acme:_:escape-{k}": "p" * k + "ab\x1b[31mcd\u200d" * 30 for k in range(4)},
    "acme:_:thumbs": "\U0001f44d\U0001f3fd" * 60,
    "acme:_:lines": "first line\n\n   second   line " + "word " * 40,
    "acme:_:short": "hi",
}


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.sqlite import SqliteSaver

    from tests.support.scenarios import agent_graph

    path = tmp_path_factory.mktemp("first") / "first.db"
    conn = sqlite3.connect(path, check_same_thread=False)
    graph = agent_graph().compile(checkpointer=SqliteSaver(conn))
    for key, text in MESSAGES.items():
        graph.invoke({"messages": [HumanMessage(content=text)]}, {"configurable": {"thread_id": key}})
    conn.close()
    return path


def _shown(text: str) -> str:
    return escape_inline(" ".join(text.split()))


def _cut_inside_a_grapheme(full: str, prefix: str) -> bool:
    """Whether ``prefix`` (a start of the escaped ``full``) ends inside a character a reader sees as one."""
    rest = full[len(prefix):]
    if not rest or not prefix:
        return False
    nxt, last = rest[0], prefix[-1]
    if unicodedata.combining(nxt) or unicodedata.category(nxt) in ("Mn", "Mc", "Me") or 0x1F3FB <= ord(nxt) <= 0x1F3FF:
        return True
    if 0x1160 <= ord(nxt) <= 0x11FF and 0x1100 <= ord(last) <= 0x11FF:  # a Hangul vowel or final after its jamo
        return True
    flags = len(prefix) - len(prefix.rstrip("".join(map(chr, range(0x1F1E6, 0x1F200)))))
    return flags % 2 == 1  # half a flag


@pytest.mark.parametrize("cols", [80, 120])
@pytest.mark.parametrize("colour", [True, False])
def test_the_first_message_fills_the_line_and_is_cut_between_graphemes(store, cols, colour):
    env = {} if colour else {"NO_COLOR": "1"}
    code, screen = on_terminal("threads", "list", "-s", str(store), "--columns", "key,first", "--no-pager", cols=cols, rows=200, env=env)
    assert code == 0, screen
    assert ("\x1b[" in screen) == colour
    lines = ESC.sub("", screen).splitlines()
    assert "RECORD" not in screen
    rows = {}
    for line in lines:
        if "│" in line:
            key, first = line.split("│", 1)
            rows[key.strip()] = (line, first[1:].rstrip(" "))
    assert set(rows) == set(MESSAGES)
    cut = 0
    for key, text in MESSAGES.items():
        line, shown = rows[key]
        assert cell_len(line.rstrip(" ")) <= cols, line
        full = _shown(text)
        room = cols - cell_len(line[: line.index("│") + 2])
        if cell_len(full) <= room:
            assert shown == full, key
            continue
        cut += 1
        assert shown.endswith("…"), (key, shown)
        prefix = shown[:-1]
        assert full.startswith(prefix), (key, prefix)
        assert WHOLE_ESCAPES.fullmatch(prefix), (key, prefix)  # no half escape
        assert not _cut_inside_a_grapheme(full, prefix), (key, prefix, full[len(prefix):][:3])
        # The room is used: one more unit (at most an escape of 10 cells) would not fit.
        assert cell_len(prefix) + 1 > room - 10, (key, cell_len(prefix), room)
        if cols == 120:
            assert cell_len(prefix) > 40  # no longer 40 characters whatever the width
    assert cut == len(MESSAGES) - 1  # all but "hi"


def test_a_pipe_keeps_the_first_message_whole(store):
    piped = run_process("threads", "list", "-s", str(store), "--columns", "key,first")
    assert piped.code == 0, piped.err
    lines = piped.out.splitlines()
    assert lines[0] == "key\tfirst_message"
    got = dict(line.split("\t", 1) for line in lines[1:])
    assert got == {k: _shown(v) for k, v in MESSAGES.items()}
    assert "…" not in piped.out and "\x1b" not in piped.out


def test_graphemes_and_clip():
    assert list(graphemes("e\u0301a")) == ["e\u0301", "a"]
    assert list(graphemes("\U0001f1f3\U0001f1f4\U0001f1f8")) == ["\U0001f1f3\U0001f1f4", "\U0001f1f8"]
    assert list(graphemes("\U0001f468\u200d\U0001f469x")) == ["\U0001f468\u200d\U0001f469", "x"]
    assert list(graphemes("\u1100\u1161\u11a8\uac00")) == ["\u1100\u1161\u11a8", "\uac00"]
    assert list(graphemes("\U0001f44d\U0001f3fd!")) == ["\U0001f44d\U0001f3fd", "!"]
    assert list(graphemes("\r\n\n")) == ["\r\n", "\n"]
    assert list(graphemes("\n\u0301")) == ["\n", "\u0301"]  # a mark after a control stands alone
    assert clip("short", 10) == "short" and clip("exactly10!", 10) == "exactly10!"
    assert clip("abcdefghijk", 10) == "abcdefghi…"
    assert clip("abcde\u0301fghijk", 6) == "abcde\u0301…"
    assert clip("abcd\\x1b[31m", 6) == "abcd…"  # not "abcd\\…"
    assert clip("ab\\u200dcdefgh", 9) == "ab\\u200d…"
    assert clip("世界世界世界", 6) == "世界…"
    assert clip("anything", 1) == "…" and clip("anything", 0) == ""
