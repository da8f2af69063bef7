"""Activity windows: ``--inactive-for 90d``, ``--inactive-since DATE``, ``--active-within 7d``.

A thread's last activity is the time in its greatest checkpoint id (a UUIDv6, see
model/times.py). A cut-off instant becomes a checkpoint-id bound, the smallest id LangGraph can
make at that instant, so the database compares ids (``max(checkpoint_id) < bound``) and never
decodes anything: ids compare as strings in time order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from symfonic_cli.errors import UsageError

_UUID_EPOCH = datetime(1582, 10, 15, tzinfo=timezone.utc)
_AGE_RE = re.compile(r"^(\d{1,9})([smhdw])$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
MAX_AGE_DAYS = 36500  # 100 years, as --grace


def parse_age(flag: str, text: str) -> timedelta:
    """``90d``, ``12h``, ``30m``, ``45s``, ``2w``: a whole number and a unit (no bare numbers:
    a retention period read in the wrong unit would erase the wrong threads)."""
    m = _AGE_RE.match(text)
    if not m:
        raise UsageError(f"{flag} '{text}' is not a duration", hint="use a whole number and a unit: 90d, 12h, 30m, 45s, 2w")
    seconds = int(m.group(1)) * _UNITS[m.group(2)]
    if seconds > MAX_AGE_DAYS * 86400:
        raise UsageError(f"{flag} '{text}' is out of range", hint=f"use 0s to {MAX_AGE_DAYS}d")
    return timedelta(seconds=seconds)


def parse_instant(flag: str, text: str, tz=timezone.utc) -> datetime:
    """An ISO 8601 date or time; without an offset, in ``tz`` (--tz; UTC by default)."""
    value = text.strip()
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(value)
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=tz)
        value = parsed.astimezone(timezone.utc)
    except (ValueError, OverflowError):
        raise UsageError(f"{flag} '{text}' is not an ISO 8601 date or time", hint="e.g. 2026-09-01 or 2026-09-01T00:00:00Z") from None
    if value.year < 1583:
        raise UsageError(f"{flag} '{text}' is before any checkpoint id can be")
    return value


def id_bound(instant: datetime) -> str:
    """The smallest UUIDv6 checkpoint id of ``instant`` (lowercase, as LangGraph writes ids):
    every id made at or after the instant compares >= this string, every earlier one <."""
    ticks = (instant - _UUID_EPOCH) // timedelta(microseconds=1) * 10
    ticks = max(0, min(ticks, (1 << 60) - 1))
    h = f"{ticks:015x}"
    return f"{h[0:8]}-{h[8:12]}-6{h[12:15]}-0000-000000000000"


@dataclass(frozen=True)
class ActivityWindow:
    """Which threads a selection keeps by last activity; the instants are fixed once, at the start."""

    inactive_before: datetime | None = None  # last activity strictly before this
    active_from: datetime | None = None  # last activity at or after this

    @property
    def last_before(self) -> str | None:
        return id_bound(self.inactive_before) if self.inactive_before else None

    @property
    def last_from(self) -> str | None:
        return id_bound(self.active_from) if self.active_from else None

    def keeps(self, last_checkpoint_id: str | None) -> bool:
        """The same test in Python (for rows already read, and the re-check before an erase)."""
        if last_checkpoint_id is None:
            return False
        if self.last_before is not None and not last_checkpoint_id < self.last_before:
            return False
        return not (self.last_from is not None and last_checkpoint_id < self.last_from)

    def describe(self) -> dict:
        """For receipts and manifests: the cut-off instants, UTC."""
        out = {}
        if self.inactive_before is not None:
            out["inactive_before"] = _iso(self.inactive_before)
        if self.active_from is not None:
            out["active_from"] = _iso(self.active_from)
        return out


def _iso(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def window(*, inactive_for: str | None, inactive_since: str | None, active_within: str | None, now: datetime | None = None,
           tz=None) -> ActivityWindow | None:
    """The window the options ask for (None when none is given); ``now`` is read once."""
    if inactive_for is not None and inactive_since is not None:
        raise UsageError("give --inactive-for or --inactive-since, not both")
    if inactive_for is None and inactive_since is None and active_within is None:
        return None
    now = now or datetime.now(timezone.utc)
    before = None
    if inactive_for is not None:
        before = now - parse_age("--inactive-for", inactive_for)
    elif inactive_since is not None:
        before = parse_instant("--inactive-since", inactive_since, tz or timezone.utc)
    active = now - parse_age("--active-within", active_within) if active_within is not None else None
    if before is not None and active is not None and active >= before:
        raise UsageError("--active-within and --inactive-for/--inactive-since select no thread together", hint="the active window must end before the idle cut-off")
    return ActivityWindow(before, active)
