"""``--tz ZONE`` (issue #15): one root option, before or after the command name, for every time
shown in tables and text and every time typed without an offset. JSON and JSONL stay UTC with
``Z``. Screens are read from the real binary on a pseudo-terminal."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from tests.support.cli import run, run_process
from tests.support.terminal import on_terminal

KEY = "acme:_:s-001"
ZONE = "Asia/Kolkata"  # +05:30 all year: the shown offset is known
ISO_Z = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _local(text: str, zone: str = ZONE) -> str:
    """How a time stored as ``text`` (UTC) reads at ``--tz zone``."""
    return _utc(text).astimezone(ZoneInfo(zone)).isoformat()


def _screen(*args, cols=120):
    # Tables show ages unless --absolute-time (issue #37): the instants, in the zone, with it.
    code, screen = on_terminal(*args, "--no-pager", "--absolute-time", cols=cols, rows=900)
    assert code == 0, screen
    return screen


@pytest.mark.parametrize("where", ["after", "before"])
def test_threads_list_shows_times_in_the_zone(any_kind, where):
    url = any_kind.new_store()
    listed = json.loads(run("threads", "list", "-s", url, "-f", "json", "--tz", ZONE).out)
    assert listed and all(ISO_Z.match(r["last_activity"]) for r in listed)  # JSON stays UTC
    args = ("threads", "list", "-s", url, "--tz", ZONE) if where == "after" else ("--tz", ZONE, "threads", "list", "-s", url)
    # the default table shows the last activity; --columns asks for the first one too
    screen = _screen(*args, "--columns", "key,first_activity,last_activity")
    for r in listed:
        assert _local(r["last_activity"]) in screen and _local(r["first_activity"]) in screen
        assert r["last_activity"] not in screen
    text = run(*args, "-f", "text").out
    assert all(_local(r["last_activity"]) in text for r in listed)
    assert "+05:30" in text and not re.search(r"\d\dZ\b", text)


def test_every_reading_command_shows_times_in_the_zone(sqlite_master):
    s = str(sqlite_master)
    # transcript show
    rows = json.loads(run("transcript", "show", "-s", s, "-t", KEY, "-f", "json", "--tz", ZONE).out)
    stamps = [r["timestamp"] for r in rows if r["timestamp"]]
    assert stamps and all(ISO_Z.match(t) for t in stamps)
    screen = _screen("transcript", "show", "-s", s, "-t", KEY, "--tz", ZONE, cols=80)
    assert all(_local(t) in screen for t in stamps)
    # thread show: created, first and last activity
    state = json.loads(run("thread", "show", "-s", s, "-t", KEY, "-f", "json").out)
    screen = _screen("thread", "show", "-s", s, "-t", KEY, "--tz", ZONE, cols=80)
    for name in ("first_activity", "last_activity"):
        assert ISO_Z.match(state[name]) and _local(state[name]) in screen
    # thread history: the table and the text show each time whole
    history = json.loads(run("thread", "history", "-s", s, "-t", KEY, "-f", "json").out)
    screen = _screen("thread", "history", "-s", s, "-t", KEY, "--tz", ZONE, "--absolute-time", cols=80)
    assert all(_local(e["ts"]) in screen for e in history)
    text = run("thread", "history", "-s", s, "-t", KEY, "-f", "text", "--tz", ZONE).out
    assert all(_local(e["ts"]) in text for e in history)
    # compat show
    verdicts = json.loads(run("compat", "show", "-s", s, "-t", KEY, "-f", "json", "--tz", ZONE).out)
    screen = _screen("compat", "show", "-s", s, "-t", KEY, "--tz", ZONE)
    assert all(_local(v["ts"]) in screen for v in verdicts if v["ts"])
    # the erase plan (nothing erased)
    listed = {r["key"]: r for r in json.loads(run("threads", "list", "-s", s, "-f", "json").out)}
    code, screen = on_terminal("thread", "erase", "-s", s, "-t", KEY, "--dry-run", "--tz", ZONE, "--absolute-time", cols=200)
    assert code == 0 and _local(listed[KEY]["last_activity"]) in screen, screen


def test_utc_by_default_and_for_utc(sqlite_master):
    s = str(sqlite_master)
    listed = json.loads(run("threads", "list", "-s", s, "-f", "json").out)
    for extra in ((), ("--tz", "UTC")):
        text = run("threads", "list", "-s", s, "-f", "text", *extra).out
        assert all(r["last_activity"] in text for r in listed)


@pytest.mark.parametrize(
    "args",
    [
        ("threads", "list"),
        ("store", "info"),
        ("transcript", "show", "-t", KEY),
        ("thread", "show", "-t", KEY),
        ("thread", "history", "-t", KEY),
        ("compat", "report"),
        ("thread", "erase", "-t", KEY, "--dry-run"),
    ],
)
def test_unknown_zone_is_one_line_and_exit_2(sqlite_master, args):
    # One whole process (the exit status the shell sees), the other forms in-process (same boundary).
    for where in ("after", "before", "env"):
        if where == "after":
            res = run_process(*args, "-s", str(sqlite_master), "--tz", "Mars/Olympus")
        elif where == "before":
            res = run("--tz", "Mars/Olympus", *args, "-s", str(sqlite_master))
        else:
            res = run(*args, "-s", str(sqlite_master), env={"SYMFONIC_TZ": "Mars/Olympus"})
        assert res.code == 2, (args, where, res)
        assert res.out == "" and res.err.count("\n") == 1 and "Traceback" not in res.err
        assert "unknown time zone 'Mars/Olympus'" in res.err and res.err.startswith("symfonic: error: --tz")


def test_naive_time_input_is_read_in_the_zone(sqlite_master):
    s = str(sqlite_master)
    rows = json.loads(run("transcript", "show", "-s", s, "-t", KEY, "-f", "json").out)
    last = max(_utc(r["timestamp"]) for r in rows if r["timestamp"])
    # The last row's time as a Kolkata wall clock, without an offset: read in --tz it keeps the row;
    # read as UTC (the default) it is 5.5 hours later and keeps nothing.
    wall = last.astimezone(ZoneInfo(ZONE)).replace(tzinfo=None).isoformat()
    kept = json.loads(run("transcript", "show", "-s", s, "-t", KEY, "-f", "json", "--since", wall, "--tz", ZONE).out)
    assert [_utc(r["timestamp"]) for r in kept] and all(_utc(r["timestamp"]) >= last for r in kept)
    assert json.loads(run("transcript", "show", "-s", s, "-t", KEY, "-f", "json", "--since", wall).out) == []
    # An offset is taken as given, whatever --tz says.
    exact = last.isoformat()
    assert json.loads(run("transcript", "show", "-s", s, "-t", KEY, "-f", "json", "--since", exact, "--tz", ZONE).out) == kept


def test_inactive_since_is_read_in_the_zone(sqlite_master):
    s = str(sqlite_master)
    listed = json.loads(run("threads", "list", "-s", s, "-f", "json").out)
    newest = max(_utc(r["last_activity"]) for r in listed)
    # A minute after the newest activity, written as a UTC wall clock without an offset.
    wall = (newest + timedelta(minutes=1)).astimezone(timezone.utc).replace(tzinfo=None).isoformat(timespec="seconds")
    as_utc = json.loads(run("threads", "list", "-s", s, "-f", "json", "--inactive-since", wall).out)
    assert {r["key"] for r in as_utc} == {r["key"] for r in listed}
    # In Kolkata that wall clock is 5.5 hours earlier: before the newest activity.
    in_zone = json.loads(run("threads", "list", "-s", s, "-f", "json", "--inactive-since", wall, "--tz", ZONE).out)
    cut = newest + timedelta(minutes=1) - timedelta(hours=5, minutes=30)
    assert {r["key"] for r in in_zone} == {r["key"] for r in listed if _utc(r["last_activity"]) < cut}
    assert len(in_zone) < len(listed)


def test_offset_zone_and_environment_variable(sqlite_master):
    s = str(sqlite_master)
    listed = json.loads(run("threads", "list", "-s", s, "-f", "json").out)
    text = run("threads", "list", "-s", s, "-f", "text", env={"SYMFONIC_TZ": "America/New_York"}).out
    assert all(_local(r["last_activity"], "America/New_York") in text for r in listed)
    # The command line beats the environment.
    text = run("threads", "list", "-s", s, "-f", "text", "--tz", ZONE, env={"SYMFONIC_TZ": "America/New_York"}).out
    assert all(_local(r["last_activity"]) in text for r in listed)
    fixed = run("threads", "list", "-s", s, "-f", "text", "--tz=+02:00").out
    assert all(_utc(r["last_activity"]).astimezone(timezone(timedelta(hours=2))).isoformat() in fixed for r in listed)



def test_compat_thread_report_shows_boundary_and_unfinalized_times_in_the_zone(_sqlite_backend):
    """The per-thread report's pairs embed times in sentences: those read in the zone too (the
    envelope store of tests/compat/test_compat.py, written by the real graph through the envelope saver)."""
    from tests.compat.test_compat import THREADS, _write

    store = _write(_sqlite_backend, THREADS)
    for key, field in (("acme:_:boundaries", "safe_boundary"), ("crash:_:old", "unfinalized")):
        args = ("compat", "report", "-s", store.url, "-t", key, "--fail-on", "", "--tz", ZONE)
        data = json.loads(run(*args, "-f", "json").out)
        stamps = [data[field]["ts"]] if field == "safe_boundary" else [u["ts"] for u in data[field]]
        assert stamps and all(ISO_Z.match(t) for t in stamps)  # JSON stays UTC
        text = run(*args, "-f", "text").out
        assert all(_local(t) in text for t in stamps) and not any(t in text for t in stamps), text
