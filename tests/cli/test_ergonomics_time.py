"""Issue #37, items 3 and 5: tables show ages (kubectl's AGE) unless --absolute-time; text and JSON
keep the ISO instants; durations are echoed as typed; an assistant message that only calls tools
reads ``(calls lookup)``. The real binary on a pseudo-terminal at 80 and 120 columns, and a pipe."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone

import pytest

from symfonic_cli.clock import age
from tests.support.cli import run, run_process
from tests.support.terminal import on_terminal

KEY = "acme:_:s-001"
AGE = re.compile(r"^\d+[smhdy]$")
ISO_Z = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


def _rows(screen: str) -> list[list[str]]:
    plain = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", screen)
    return [[c.strip() for c in re.split(r"[│┃]", line)] for line in plain.splitlines() if "│" in line]


def test_age_units_and_boundaries():
    now = datetime(2026, 12, 3, 9, 0, tzinfo=timezone.utc)
    for delta, want in [
        (timedelta(seconds=0), "0s"), (timedelta(seconds=45), "45s"), (timedelta(seconds=119), "119s"),
        (timedelta(minutes=2), "2m"), (timedelta(minutes=119, seconds=59), "119m"), (timedelta(hours=2), "2h"),
        (timedelta(hours=47), "47h"), (timedelta(hours=48), "2d"), (timedelta(days=12), "12d"),
        (timedelta(days=729), "729d"), (timedelta(days=730), "2y"),
    ]:
        assert age(now - delta, now) == want, delta
    assert age(now + timedelta(seconds=5), now) == "in 5s"
    # An instant, whatever its offset: the same age (never compared as text).
    berlin = (now - timedelta(hours=3)).astimezone(timezone(timedelta(hours=1)))
    assert age(berlin, now) == "3h"
    assert age((now - timedelta(hours=3)).replace(tzinfo=None), now) == "3h"  # naive is UTC


def _ages_between(iso: str, before: datetime, after: datetime) -> set[str]:
    instant = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    steps = int((after - before).total_seconds()) + 2
    return {age(instant, before + timedelta(seconds=k)) for k in range(steps)} | {age(instant, after)}


@pytest.mark.parametrize("cols", [80, 120])
@pytest.mark.parametrize("color", [True, False])
def test_threads_list_table_shows_ages_and_absolute_time_the_instants(sqlite_master, cols, color):
    url = str(sqlite_master)
    listed = {r["key"]: r["last_activity"] for r in json.loads(run("threads", "list", "-s", url, "-f", "json").out)}
    assert all(ISO_Z.match(v) for v in listed.values())  # JSON: always the instants
    env = {} if color else {"NO_COLOR": "1"}
    before = datetime.now(timezone.utc)
    code, screen = on_terminal("threads", "list", "-s", url, "--no-pager", cols=cols, rows=500, env=env)
    after = datetime.now(timezone.utc)
    assert code == 0, screen
    rows = {r[0]: r for r in _rows(screen) if r[0] in listed}
    assert set(rows) == set(listed)
    for key, row in rows.items():
        assert AGE.match(row[-1]), row
        assert row[-1] in _ages_between(listed[key], before, after), (row, listed[key])
    code, screen = on_terminal("threads", "list", "-s", url, "--no-pager", "--absolute-time", cols=cols, rows=500, env=env)
    assert code == 0, screen
    rows = {r[0]: r for r in _rows(screen) if r[0] in listed}
    assert {k: r[-1] for k, r in rows.items()} == listed
    # Before the command name too, as every root option.
    code, screen2 = on_terminal("--absolute-time", "threads", "list", "-s", url, "--no-pager", cols=cols, rows=500, env=env)
    assert (code, screen2) == (0, screen)


def test_a_pipe_keeps_the_instants(sqlite_master):
    piped = run_process("threads", "list", "-s", str(sqlite_master))
    assert piped.code == 0, piped.err
    lines = [line.split("\t") for line in piped.out.splitlines()]
    assert lines[0][-1] == "last_activity" and all(ISO_Z.match(line[-1]) for line in lines[1:])


@pytest.mark.parametrize("cols", [80, 120])
def test_transcript_table_shows_ages_and_tool_calls(sqlite_master, cols):
    url = str(sqlite_master)
    rows = json.loads(run("transcript", "show", "-s", url, KEY, "-f", "json", "--tools").out)
    calling = [r for r in rows if r["role"] == "assistant" and not r["content"] and r["tool_calls"]]
    assert calling, rows
    code, screen = on_terminal("transcript", "show", "-s", url, KEY, "--no-pager", cols=cols, rows=900)
    assert code == 0, screen
    shown = {r[0]: r for r in _rows(screen) if r[0].isdigit()}
    for r in calling:
        names = ", ".join(c["name"] for c in r["tool_calls"])
        assert shown[str(r["index"])][3] == f"(calls {names})"
    assert all(AGE.match(row[2]) for row in shown.values()), shown
    # In a pipe too; JSON keeps the content as stored (empty).
    piped = run_process("transcript", "show", "-s", url, KEY)
    assert f"(calls {', '.join(c['name'] for c in calling[0]['tool_calls'])})" in piped.out
    assert all(r["content"] == "" for r in json.loads(run("transcript", "show", "-s", url, KEY, "-f", "json").out) if r["index"] == calling[0]["index"])


def test_prune_echoes_the_duration_as_typed(sqlite_store):
    planned = run_process("thread", "prune", "-s", str(sqlite_store), "--all", "--older-than", "30d", "--dry-run")
    assert planned.code == 0, planned.err
    assert "newer than 30d;" in planned.out and "2592000" not in planned.out
    hours = run("thread", "prune", "-s", str(sqlite_store), "--all", "--older-than", "36h", "--dry-run")
    assert "newer than 36h;" in hours.out
