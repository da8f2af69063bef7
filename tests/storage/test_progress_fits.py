"""The progress line of a long run is one screen row whatever the terminal's width (issue #45 item 7).

It is redrawn with a carriage return, which goes back to the start of the cursor's screen row only:
a line wider than the terminal wrapped, and each drawing left its first row behind, the next one's
"pruned" written after the last one's "0 s" ("0 spruned" at a million threads). Read here as a
person sees it: the real binary on a pseudo-terminal, its output laid out on a screen of that width.
"""

from __future__ import annotations

import re
import shutil

import pytest

from tests.support.cli import run
from tests.support.terminal import on_terminal
from tests.threads.test_listing_fit import ANSI

PROGRESS = re.compile(r"\d+/\d+")


def screen_rows(text: str, cols: int) -> list[str]:
    """``text`` as a terminal of ``cols`` columns shows it: characters written from the cursor,
    wrapping at the right edge, ``\\r`` back to the start of the cursor's row, ``\\n`` to the next."""
    rows: list[list[str]] = [[]]
    x = y = 0
    for ch in text:
        if ch == "\r":
            x = 0
        elif ch == "\n":
            x, y = 0, y + 1
        else:
            if x >= cols:  # the wrap happens when the next character comes
                x, y = 0, y + 1
            while len(rows) <= y:
                rows.append([])
            row = rows[y]
            row.extend(" " * (x + 1 - len(row)))
            row[x] = ch
            x += 1
        while len(rows) <= y:
            rows.append([])
    return ["".join(r).rstrip() for r in rows]


def test_screen_rows_wrap_and_return():
    assert screen_rows("abcdef\rX", 4) == ["abcd", "Xf"]  # \r: the start of the last row only
    assert screen_rows("ab\r\ncd\n", 4) == ["ab", "cd", ""]


@pytest.fixture(scope="module")
def demo_master(tmp_path_factory):
    path = tmp_path_factory.mktemp("demo") / "d.db"
    assert run("demo", str(path)).code == 0
    return path


@pytest.mark.parametrize("cols", [16, 22, 30])
def test_the_progress_line_of_a_prune_stays_one_row_on_a_narrow_terminal(demo_master, tmp_path, cols):
    """A prune of every demo thread on a terminal narrower than its progress line ("pruned 1/12
    threads, 0 s"): the screen keeps the last drawing only, on one row, and no row starts with what
    a wrapped drawing left (a word run into the next drawing's)."""
    store = tmp_path / "d.db"
    shutil.copy(demo_master, store)
    code, raw = on_terminal("thread", "prune", "-s", str(store), "--all", "--yes", "-f", "text", cols=cols, rows=200,
                            env={"NO_COLOR": "1"}, timeout=120)
    assert code == 0, raw
    rows = screen_rows(ANSI.sub("", raw), cols)
    drawn = [r for r in rows if PROGRESS.search(r)]
    last = re.fullmatch(r"(?:pruned )?(\d+)/(\d+)(?: threads, \d+ s)?", drawn[-1])
    assert drawn == [drawn[-1]] and last and last[1] == last[2] and int(last[2]) > 3, drawn
    assert all(len(r) < cols for r in drawn)
    assert not any("spruned" in r or re.search(r"\d pruned \d", r) for r in rows), rows
