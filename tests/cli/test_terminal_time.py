"""Time input a person means (issue #15): relative times, a date alone, minutes for --until, --tz;
an empty answer says so on a terminal; --truncate cuts content with a marker."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symfonic_cli.clock import parse_time, zone
from tests.support.cli import run, run_process
from tests.support.terminal import on_terminal

KEY = "acme:_:s-001"


def rows(url, *args):
    res = run("transcript", "show", "-s", str(url), "-t", KEY, "-f", "json", *args)
    assert res.code == 0, res.err
    return json.loads(res.out)


def _ts(r):
    return datetime.fromisoformat(r["timestamp"].replace("Z", "+00:00"))


def test_relative_date_and_minute_bounds(any_kind):
    url = any_kind.new_store()
    every = rows(url)
    assert every and all(r["timestamp"].endswith("Z") for r in every)
    assert rows(url, "--since", "3650d") == every  # all written in this run
    assert rows(url, "--until", "3650d") == []
    day = every[0]["timestamp"][:10]
    same_day = [r for r in every if r["timestamp"][:10] == day]
    assert rows(url, "--since", day, "--until", day) == same_day
    # Minutes without seconds: --until keeps the whole minute, --since starts at its first second.
    pick = every[len(every) // 2]
    minute = pick["timestamp"][:16]
    assert rows(url, "--until", minute) == [r for r in every if r["timestamp"][:16] <= minute]
    assert rows(url, "--since", minute) == [r for r in every if r["timestamp"][:16] >= minute]
    # --tz: the same instant written as a Berlin wall time selects the same rows.
    berlin = _ts(pick).astimezone(zone("Europe/Berlin")).replace(tzinfo=None).isoformat()
    assert rows(url, "--since", berlin, "--tz", "Europe/Berlin") == rows(url, "--since", pick["timestamp"])
    # The same wall time read in another zone is another instant.
    shifted = _ts(pick).astimezone(zone("Europe/Berlin")).replace(tzinfo=None)
    assert parse_time(shifted.isoformat(), until=False, tz=zone("+05:00")) != _ts(pick)


@pytest.mark.parametrize("value", ["yesterday", "2026-13-01", "5 parsecs", "", "1e3d", "99999999d"])
def test_bad_times_are_usage_errors(sqlite_master, value):
    res = run("transcript", "show", "-s", str(sqlite_master), "-t", KEY, "--since", value)
    assert res.code == 2 and "--since" in res.err and len(res.err.splitlines()) == 1
    res = run("transcript", "show", "-s", str(sqlite_master), "-t", KEY, "--tz", "Mars/Base")
    assert res.code == 2 and "--tz" in res.err


def test_parse_time_rules():
    now = datetime(2026, 12, 1, 10, 0, tzinfo=timezone.utc)
    assert parse_time("90s", until=False, now=now) == now - timedelta(seconds=90)
    assert parse_time("2h", until=True, now=now) == now - timedelta(hours=2)
    assert parse_time("2026-12-01", until=True) == datetime(2026, 12, 1, 23, 59, 59, 999999, tzinfo=timezone.utc)
    assert parse_time("2026-12-01", until=False) == datetime(2026, 12, 1, tzinfo=timezone.utc)
    assert parse_time("2026-12-01T08:24", until=True) == datetime(2026, 12, 1, 8, 24, 59, 999999, tzinfo=timezone.utc)
    assert parse_time("2026-12-01T08:24:52Z", until=True) == datetime(2026, 12, 1, 8, 24, 52, tzinfo=timezone.utc)
    assert parse_time("9999-12-31", until=True).year == 9999
    assert parse_time("2026-12-01T08:00", until=False, tz=zone("Europe/Berlin")) == datetime(2026, 12, 1, 7, tzinfo=timezone.utc)


@settings(max_examples=150, derandomize=True, deadline=None)
@given(st.text(max_size=30))
def test_parse_time_never_raises_anything_but_value_error(text):
    try:
        parse_time(text, until=True)
    except ValueError:
        pass


def test_empty_result_says_so_on_a_terminal(sqlite_master):
    code, screen = on_terminal("transcript", "show", "-s", str(sqlite_master), "-t", KEY, "--until", "3650d", cols=80)
    n = len(rows(sqlite_master))
    assert code == 0 and f"no rows match; the thread has {n} rows between " in screen
    piped = run_process("transcript", "show", "-s", str(sqlite_master), "-t", KEY, "--until", "3650d")
    assert piped.code == 0 and piped.out == "" and piped.err == ""


def test_truncate_cuts_with_a_marker(sqlite_master):
    every = rows(sqlite_master)
    long = next(r for r in every if len(r["content"]) > 12)
    for option in ("--truncate", "--max-width"):
        text = run("transcript", "show", "-s", str(sqlite_master), "-t", KEY, "-f", "text", option, "10").out
        assert f"{long['content'][:10]}… [{len(long['content']) - 10} more characters]" in text
    # JSON keeps the content whole.
    assert rows(sqlite_master, "--truncate", "10") == every
