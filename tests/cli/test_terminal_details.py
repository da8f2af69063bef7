"""Small things a person meets at the terminal: an empty table says "(0 rows)" instead of a bare
title, a long title is not folded to a narrow table's width, and a mistyped key's suggestions
come closest first."""

from __future__ import annotations

import shutil

from tests.support.cli import run
from tests.support.terminal import on_terminal


def test_an_empty_table_says_0_rows(sqlite_master, tmp_path):
    # a long path, so a title folded to the table's width would show
    deep = tmp_path / ("a-long-folder-name-" * 2) / "store.db"
    deep.parent.mkdir(parents=True)
    shutil.copyfile(sqlite_master, deep)
    code, screen = on_terminal("threads", "list", "-s", str(deep), "--tenant", "nobody", "--no-pager", cols=80)
    assert code == 0, screen
    lines = [line.rstrip() for line in screen.splitlines()]
    assert "(0 rows)" in lines
    assert str(deep) in lines or len(str(deep)) > 80  # the title whole on its line
    assert any(line.startswith("symfonic: no threads match") for line in lines)
    code, screen = on_terminal("threads", "list", "-s", str(deep), "--tenant", "acme", "--no-pager", cols=120)
    assert code == 0 and "(0 rows)" not in screen


def test_suggestions_come_closest_first(sqlite_master):
    keys = [r for r in run("threads", "list", "-s", str(sqlite_master), "-f", "text").out.splitlines()[1:]]
    acme = sorted(line.split("\t")[0] for line in keys if line.startswith("acme:"))
    assert len(acme) >= 2
    target = acme[-1]
    typo = target[:-2] + target[-1]  # one character dropped near the end
    res = run("transcript", "show", "-s", str(sqlite_master), "-t", typo)
    assert res.code == 3
    first = res.err.split("did you mean: ", 1)[1].split(", ")[0]
    assert first == f"'{target}'", res.err
