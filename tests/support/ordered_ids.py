"""Checkpoint ids at and around the ordered form (``clock.ORDERED_ID_REGEX``: a lowercase UUIDv6):
real ids first (``near_misses()[:5]``), then near misses of every kind, for the tests that hold a
store's own test of the form to Python's."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

REAL = "1f1f2384-ab91-66cb-bfff-139f4ec94f5a"


def near_misses() -> list[str]:
    from symfonic_cli import clock

    now = datetime.now(timezone.utc)
    real = [REAL, clock.id_at(now), clock.id_at(now - timedelta(days=400)), "00000000-0000-6000-0000-000000000000",
            "ffffffff-ffff-6fff-ffff-ffffffffffff"]
    ids = list(real)
    for i in (0, 7, 9, 14, 20, 35):  # one character replaced, dashes and the version's place included
        for c in ("A", "F", "g", "G", "-", "_", "%", " ", "\t", "\n", "\\", "'", ".", "6", "\u00e9", "\u0660",
                  "\uff10", "\u00b2", "\u212a", "\U0001f600", "x"):
            ids.append(REAL[:i] + c + REAL[i + 1:])
    ids += [
        REAL.upper(), REAL[:20] + REAL[20:].upper(), REAL[:35], REAL + "0", REAL + "\n", "\n" + REAL[1:], REAL[1:] + "\n",
        REAL[:35] + "-", "-" + REAL[1:], REAL.replace("-", ""), REAL.replace("-", "_"), REAL.replace("-", "%"),
        REAL[:8] + REAL[9:13] + "-" + REAL[8:9] + REAL[13:],  # a dash moved one place
        REAL[:18] + REAL[19:] + "-",  # the fourth dash moved to the end
        REAL[:14] + "1" + REAL[15:], REAL[:14] + "7" + REAL[15:],  # another UUID version
        REAL[:30] + "\u00e9" + REAL[32:],  # 35 characters, 36 bytes
        REAL[:34] + "\u00e9",  # 35 characters, 36 bytes, at the end
        REAL[:35] + "\u00e9", REAL[:35] + "\U0001f600",  # 36 characters, more bytes
        "________-____-6___-____-____________", "%", "%%-%%-%%-%%-%%-%%", "", " ", "step-1",
        "2026-11-30T08:24:52.123456+00:00", "2026-11-30T08:24:52.123456Z", REAL + "," + REAL,
        REAL[:-1] + "0," + REAL,
    ]
    return ids
