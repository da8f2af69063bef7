"""The printed form of a time (clock.iso_z) made from a whole second's text held once: the same
text as ``isoformat()`` gives, at every microsecond count, across the UUID epoch's whole range,
and the held texts stay bounded however many seconds a listing prints."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone

from symfonic_cli import clock


def _isoformat_z(dt: datetime) -> str:
    return dt.isoformat()[:-6] + "Z"


def test_every_second_and_fraction_prints_as_isoformat():
    rng = random.Random(45)
    start = clock.UUID_EPOCH
    span = (datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=timezone.utc) - start) // timedelta(microseconds=1)
    times = [start, start + timedelta(microseconds=span), datetime(2026, 12, 1, 8, 24, 52, 1, tzinfo=timezone.utc)]
    times += [start + timedelta(microseconds=rng.randrange(span)) for _ in range(20_000)]
    times += [t.replace(microsecond=0) for t in times[:5_000]]  # no fraction: none printed
    for t in times:
        assert clock.iso_z(t) == _isoformat_z(t)
        assert clock.iso_z(t) == _isoformat_z(t)  # the second's text held: the same again


def test_the_held_seconds_stay_bounded():
    base = datetime(2026, 1, 1, tzinfo=timezone.utc)
    for s in range(3 * clock._SECONDS_HELD):
        assert clock.iso_z(base + timedelta(seconds=s, microseconds=s)) == _isoformat_z(base + timedelta(seconds=s, microseconds=s))
    assert len(clock._SECONDS) <= clock._SECONDS_HELD


def test_other_offsets_and_naive_times_are_converted():
    plus2 = timezone(timedelta(hours=2))
    assert clock.iso_z(datetime(2026, 12, 1, 10, 0, 0, 5, tzinfo=plus2)) == "2026-12-01T08:00:00.000005Z"
    assert clock.iso_z(datetime(2026, 12, 1, 8, 0)) == "2026-12-01T08:00:00Z"
    assert clock.iso_utc(None) is None
