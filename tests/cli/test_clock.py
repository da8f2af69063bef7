"""One clock (issue 22 item 2): one duration grammar for every option, one smallest-id-at-an-instant,
the time in a UUIDv6 id in any case, and one ISO form (``Z``) in every output (the export
manifest's: tests/export/test_export_times.py, so the clock's tests start no server)."""

from __future__ import annotations

import ast
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from symfonic_cli import clock
from symfonic_cli.errors import UsageError
from tests.support.cli import run
from tests.support.old_threads import clock_moved_back

PACKAGE = Path(clock.__file__).parent


@pytest.mark.parametrize("text, seconds", [("90s", 90), ("15m", 900), ("2h", 7200), ("1d", 86400), ("2w", 1209600), ("1.5h", 5400), (" 3D ", 259200)])
def test_one_duration_grammar(text, seconds):
    assert clock.parse_duration(text, option="--x").total_seconds() == seconds
    assert clock.parse_duration(text, option="--grace", bare_unit="m").total_seconds() == seconds
    now = datetime(2026, 12, 1, tzinfo=timezone.utc)
    assert clock.parse_time(text, until=False, now=now) == now - timedelta(seconds=seconds)


def test_bare_numbers_only_where_the_option_says_what_they_mean():
    assert clock.parse_duration("10", option="--grace", bare_unit="m") == timedelta(minutes=10)
    with pytest.raises(UsageError, match="not a duration"):
        clock.parse_duration("10", option="--inactive-for")
    with pytest.raises(UsageError, match="out of range"):
        clock.parse_duration("36501d", option="--inactive-for")


def test_every_duration_option_takes_the_same_words(sqlite_store):
    """``2w`` and ``1.5d`` are durations for --grace, --inactive-for and --since alike."""
    s = str(sqlite_store)
    for args in (("compat", "report", "-s", s, "--grace", "2w"), ("threads", "list", "-s", s, "--inactive-for", "1.5d"),
                 ("threads", "list", "-s", s, "--active-within", "2w"), ("transcript", "show", "-s", s, "-t", "acme:_:s-001", "--since", "2w"),
                 ("thread", "erase", "-s", s, "-t", "acme:_:s-001", "--grace", "2w", "--dry-run")):
        r = run(*args)
        assert r.code in (0, 5), (args, r.err)  # compat report: 5 is a finding, not a usage error
        assert "not a duration" not in r.err and "not a time" not in r.err


def test_the_smallest_id_at_an_instant_is_exact_to_the_microsecond():
    with clock_moved_back(timedelta(days=3)):
        from langgraph.checkpoint.base.id import uuid6

        made = [str(uuid6(clock_seq=i)) for i in range(50)]
    for cid in made:
        at = clock.checkpoint_id_time(cid)
        assert clock.id_at(at) <= cid < clock.id_at(at + timedelta(microseconds=1))
        assert clock.checkpoint_id_time(clock.id_at(at)) == at
    # compat's grace window uses this one function (no copy of its own).
    import symfonic_cli.compat.report as report

    assert not hasattr(report, "id_at")


def test_times_of_ids_in_any_case_and_of_ts():
    cid = "1f0c3b2a-9d4e-6f10-8abc-0123456789ab"
    assert clock.checkpoint_id_time(cid.upper()) == clock.checkpoint_id_time(cid) is not None
    assert clock.is_ordered_id(cid) and not clock.is_ordered_id(cid.upper())
    assert not clock.is_ordered_id(cid + "\n")  # as the databases' tests (and joined_ordered) say
    assert clock.checkpoint_id_time("2025-01-02T03:04:05.000006+00:00") is None  # an ISO id: its ts decides
    assert clock.checkpoint_time("not-an-id", "2025-01-02T03:04:05.000006+00:00") == datetime(2025, 1, 2, 3, 4, 5, 6, tzinfo=timezone.utc)
    assert clock.checkpoint_time("step-0001", None) is None
    assert clock.checkpoint_id_time("1f0c3b2a-9d4e-6f10-8abc-0123456789zz") is None  # not hex: no time
    assert clock.last_activity([(cid, None), ("x", "2020-01-01T00:00:00Z")]) == (clock.checkpoint_id_time(cid), False)
    assert clock.last_activity([(cid, None), ("x", None)])[1] is True


def test_tz_offset_out_of_range_after_the_command(sqlite_store):
    r = run("threads", "list", "-s", str(sqlite_store), "--tz", "+25:00")
    assert r.code == 2 and "-23:59 to +23:59" in r.err and "timedelta" not in r.err


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def test_the_clock_is_a_floor_and_the_old_cycle_is_gone():
    """clock.py imports nothing of symfonic but errors; environment -> timeinput -> inputs ->
    environment no longer exists (the three duration readers are one)."""
    assert {m for m in _imports(PACKAGE / "clock.py") if m.startswith("symfonic_cli")} <= {"symfonic_cli.errors"}
    assert not (PACKAGE / "timeinput.py").exists()
    assert "symfonic_cli.inputs" not in _imports(PACKAGE / "environment.py")
    assert not {m for m in _imports(PACKAGE / "inputs.py") if m.startswith("symfonic_cli.clock")}
    # Every duration is read by the clock: no other module compiles a duration pattern.
    for path in PACKAGE.rglob("*.py"):
        if path.name != "clock.py":
            assert "[smhd" not in path.read_text(), path
