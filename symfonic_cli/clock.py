"""The one clock: durations, instants, the time in a checkpoint id, checkpoint-id bounds, the ISO form.

Base floor: imports nothing of symfonic but ``errors`` (and that only to raise). Every command
that reads or writes a time goes through here, so one grammar and one rule hold everywhere:

- a duration is ``<number><unit>``, units ``s m h d w`` (any case, spaces allowed around), 0s to
  36500d; a bare number is refused unless the option says what it means (``--grace``: minutes);
- a checkpoint was written at the time in its id when the id is a UUIDv6 (any letter case), else
  at its own ``ts``; an id yielding neither is *undatable*;
- ids compare as strings in time order only in the form LangGraph writes them (``is_ordered_id``:
  a lowercase UUIDv6); anything else is decided here, by instant;
- every time printed is ISO 8601 in UTC with ``Z`` (``iso_utc``).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

UTC = timezone.utc
UUID_EPOCH = datetime(1582, 10, 15, tzinfo=UTC)
NEVER = datetime.min.replace(tzinfo=UTC)  # sorts before every instant: newest first puts "no time" last
MAX_DURATION_DAYS = 36500  # README "Numeric options": a longer one would overflow a date
UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
DURATION_EXAMPLES = "90s, 15m, 2h, 7d, 2w"
_DURATION = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*", re.I)

# A checkpoint id whose string order is its time order: a lowercase UUIDv6. The same test in each
# store's language, so the database can tell which threads its string comparison decides exactly.
ORDERED_ID_REGEX = "^[0-9a-f]{8}-[0-9a-f]{4}-6[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$"
_H = "[0-9a-f]"
ORDERED_ID_GLOB = f"{_H * 8}-{_H * 4}-6{_H * 3}-{_H * 4}-{_H * 12}"
_ORDERED = re.compile(ORDERED_ID_REGEX)
_HEX = frozenset("0123456789abcdefABCDEF")
_DASHES = (8, 13, 18, 23)


# -- durations


def parse_duration(text: str, *, option: str, bare_unit: str | None = None) -> timedelta:
    """The ``timedelta`` a duration option names, else a usage error naming the option.

    ``bare_unit``: what a number without a unit means for this option (``"m"`` for ``--grace``);
    None refuses one (a retention period read in the wrong unit would erase the wrong threads)."""
    from symfonic_cli.errors import UsageError

    m = _DURATION.fullmatch(text or "")
    unit = m.group(2).lower() if m else ""
    if not m or (not unit and bare_unit is None):
        bare = f"; a bare number is {_UNIT_NAMES[bare_unit]}" if bare_unit else "; a number and a unit"
        raise UsageError(f"{option} '{text}' is not a duration", hint=f"e.g. {DURATION_EXAMPLES}{bare}")
    seconds = float(m.group(1)) * UNITS[unit or bare_unit or ""]  # bare_unit is set when unit is not
    if not seconds <= MAX_DURATION_DAYS * 86400:
        raise UsageError(f"{option} '{text}' is out of range", hint=f"use 0s to {MAX_DURATION_DAYS}d")
    return timedelta(seconds=seconds)


MAX_PAUSE_SECONDS = 3600.0
_MILLIS = re.compile(r"\s*(\d+(?:\.\d+)?)\s*ms\s*", re.I)


def parse_pause(text: str, *, option: str) -> timedelta:
    """A short wait between two transactions: ``200ms`` or any duration (``2s``), up to an hour."""
    from symfonic_cli.errors import UsageError

    m = _MILLIS.fullmatch(text or "")
    if m:
        td = timedelta(milliseconds=float(m.group(1)))
    else:
        try:
            td = parse_duration(text, option=option)
        except UsageError as exc:
            raise UsageError(exc.message, hint="e.g. 200ms, 2s, 1m") from None
    if td.total_seconds() > MAX_PAUSE_SECONDS:
        raise UsageError(f"{option} '{text}' is out of range", hint="use 0ms to 1h")
    return td


def positive_duration(td: timedelta, option: str) -> timedelta:
    """A duration that must be more than nothing (--max-duration 0s would do no thread at all)."""
    from symfonic_cli.errors import UsageError

    if td <= timedelta(0):
        raise UsageError(f"{option} must be more than 0s", hint=f"e.g. {DURATION_EXAMPLES}")
    return td


_UNIT_NAMES = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def is_duration(text: str) -> bool:
    """Whether ``text`` is written as a duration with its unit (``2h``), not as a time."""
    m = _DURATION.fullmatch(text or "")
    return bool(m and m.group(2))


def human_duration(d: timedelta) -> str:
    """``15m``, ``2h``, ``90d``: the largest unit that divides it, as the grammar reads it back."""
    seconds = int(d.total_seconds())
    for unit in ("d", "h", "m"):
        if seconds and seconds % UNITS[unit] == 0:
            return f"{seconds // UNITS[unit]}{unit}"
    return f"{seconds}s"


def duration_words(d: timedelta) -> str:
    """``30 days``, ``1 hour``, ``90 minutes``: ``human_duration`` in words, for a sentence a person reads."""
    short = human_duration(d)
    n, unit = short[:-1], _UNIT_NAMES[short[-1]]
    return f"{n} {unit[:-1] if n == '1' else unit}"


def age(instant: datetime | None, now: datetime) -> str:
    """How long ago ``instant`` was, as kubectl's AGE column: ``45s``, ``12m``, ``3h``, ``12d``,
    ``2y`` (whole units, rounded down; up to 2 of a unit before the next: ``90s``, ``36h``); an
    instant after ``now`` (a clock ahead) is ``in 5s``; unknown (None) is ``-``. Compared as
    instants, never as text. The one age rule: tables (render.shown_age) and the browser."""
    if instant is None:
        return "-"
    if instant.tzinfo is None:
        instant = instant.replace(tzinfo=timezone.utc)
    seconds = int((now - instant).total_seconds())
    ahead = seconds < 0
    seconds = abs(seconds)
    for unit, size, upto in (("s", 1, 120), ("m", 60, 120 * 60), ("h", 3600, 48 * 3600), ("d", 86400, 730 * 86400)):
        if seconds < upto:
            text = f"{seconds // size}{unit}"
            break
    else:
        text = f"{seconds // (365 * 86400)}y"
    return f"in {text}" if ahead else text


# -- instants people type


def zone(name: str | None):
    """The tzinfo of ``--tz``: UTC by default, a fixed offset (``+02:00``) or an IANA name."""
    if not name or name.upper() in ("UTC", "Z"):
        return UTC
    m = re.fullmatch(r"([+-])(\d\d):?(\d\d)", name)
    if m:
        delta = timedelta(hours=int(m.group(2)), minutes=int(m.group(3)))
        if delta >= timedelta(hours=24) or int(m.group(3)) >= 60:
            raise ValueError(f"offset '{name}' is out of range: use -23:59 to +23:59")
        return timezone(-delta if m.group(1) == "-" else delta)
    try:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ValueError(f"unknown time zone '{name}'") from None


# YYYY-MM-DD, then optionally [T ]HH, :MM, :SS(.ffffff): what was left out sets the span.
_ABSOLUTE = re.compile(
    r"\s*(?P<date>\d{4}-\d\d-\d\d)(?:[T ](?P<hour>\d\d)(?::(?P<minute>\d\d)(?::(?P<second>\d\d(?:[.,]\d{1,6})?))?)?)?"
    r"(?P<offset>Z|z|[+-]\d\d:?\d\d)?\s*"
)


def parse_time(text: str, *, until: bool, tz=UTC, now: datetime | None = None) -> datetime:
    """``--since``/``--until`` as a person means them (README "transcript show"):

    - a duration (unit required): that long ago;
    - a date alone: its start, or for ``until`` its end (``--until 2026-12-01`` keeps that day);
    - a time without seconds (minutes): for ``until``, the end of that minute (hour);
    - no offset: in ``tz``; ``Z`` or an offset as given.

    An aware datetime; a ValueError's text says what is wrong (the caller names the option)."""
    if is_duration(text):
        from symfonic_cli.errors import UsageError

        try:
            ago = parse_duration(text, option="")
        except UsageError as exc:
            raise ValueError(exc.hint or exc.message) from None
        try:
            return (now or datetime.now(UTC)) - ago
        except OverflowError:
            raise ValueError(f"'{text}' is before year 1") from None
    m = _ABSOLUTE.fullmatch(text)
    if not m:
        return _other_iso(text, tz)
    value = text.strip()
    if m.group("offset") in ("Z", "z"):
        value = value[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(value.replace(",", "."))
    except ValueError:
        raise ValueError(f"'{text}' is not a time") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=tz)
    if until:
        span = None
        if m.group("hour") is None:
            span = timedelta(days=1)
        elif m.group("minute") is None:
            span = timedelta(hours=1)
        elif m.group("second") is None:
            span = timedelta(minutes=1)
        if span is not None:
            try:
                dt = dt + span - timedelta(microseconds=1)
            except OverflowError:  # 9999-12-31: its end is the largest time there is
                dt = datetime.max.replace(tzinfo=dt.tzinfo)
    return dt


def time_option(option: str, text: str, *, until: bool, tz=UTC, now: datetime | None = None) -> datetime:
    """``parse_time`` for an option: a usage error naming it (``transcript show``, ``threads list``)."""
    try:
        return parse_time(text, until=until, tz=tz, now=now)
    except (ValueError, OverflowError):
        from symfonic_cli.errors import UsageError

        raise UsageError(f"{option} '{text}' is not a time", hint=TIME_EXAMPLES) from None


TIME_EXAMPLES = "e.g. 2h (ago), 2026-11-30, 2026-11-30T09:00 or 2026-11-30T09:00:00Z"


def _other_iso(text: str, tz) -> datetime:
    """Any other form ``datetime.fromisoformat`` reads (``20261201T0824``, a week date): exact."""
    value = text.strip()
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"'{text}' is not a time") from None
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=tz)


# -- the time a checkpoint was written


def checkpoint_id_time(checkpoint_id) -> datetime | None:
    """The time in a UUIDv6 checkpoint id, in any letter case; None for any other id."""
    # Parsed by hand: this runs twice per listed thread, and uuid.UUID() is slow.
    if type(checkpoint_id) is not str or len(checkpoint_id) != 36 or checkpoint_id[14] != "6":
        return None
    if any(checkpoint_id[i] != "-" for i in _DASHES):
        return None
    # time_high (32 bits), time_mid (16), time_low (12): their hex digits in a row.
    digits = checkpoint_id[0:8] + checkpoint_id[9:13] + checkpoint_id[15:18]
    if not _HEX.issuperset(digits) or not _HEX.issuperset(checkpoint_id[19:23] + checkpoint_id[24:]):
        return None
    return UUID_EPOCH + timedelta(microseconds=int(digits, 16) // 10)


def ts_time(ts) -> datetime | None:
    """A checkpoint's own ``ts`` (ISO 8601; without an offset, UTC), or None."""
    if type(ts) is not str or not ts:
        return None
    value = ts.strip()
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        return None
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=UTC)


def checkpoint_time(checkpoint_id, ts=None) -> datetime | None:
    """When a checkpoint was written: the time in its id, else its ``ts``; None: undatable."""
    return checkpoint_id_time(checkpoint_id) or ts_time(ts)


def is_ordered_id(checkpoint_id) -> bool:
    """Whether the id is in the form whose string order is time order (a lowercase UUIDv6)."""
    # fullmatch: "$" alone would also match before a trailing newline.
    return type(checkpoint_id) is str and _ORDERED.fullmatch(checkpoint_id) is not None


# Every lowercase hex digit read as "0": an ordered id becomes _SHAPE, anything else does not.
_HEX_AS_ZERO = bytes.maketrans(b"123456789abcdef", b"0" * 15)
_SHAPE = b"00000000-0000-0000-0000-000000000000,"


def joined_ordered(joined, n: int) -> bool:
    """Whether ``joined`` is ``n`` ids in the ordered form joined by ``,`` (a thread's ids as a
    database joins them in one pass): the same test as ``is_ordered_id`` for each id, run over
    the whole text by bytes operations. An id holding ``,`` or missing (NULL) changes the length
    or a separator's place, so the count cannot be met by other splits."""
    if type(joined) is not str or len(joined) != 37 * n - 1 or not joined.isascii():
        return False
    return joined_ordered_bytes(joined.encode("ascii"), n)


def joined_ordered_bytes(raw, n: int) -> bool:
    """``joined_ordered`` over the joined ids' UTF-8 bytes (no text decoded)."""
    if type(raw) is not bytes or type(n) is not int or len(raw) != 37 * n - 1:
        return False
    return raw[14::37] == b"6" * n and raw.translate(_HEX_AS_ZERO) == (_SHAPE * n)[:-1]


def ordered_id_time(checkpoint_id: str) -> datetime:
    """``checkpoint_id_time`` of an id already known to be in the ordered form (``joined_ordered``,
    or the database's own test): no checks left to make, as the listing runs it twice a thread."""
    return UUID_EPOCH + timedelta(microseconds=int(checkpoint_id[0:8] + checkpoint_id[9:13] + checkpoint_id[15:18], 16) // 10)


def id_at(instant: datetime) -> str:
    """The smallest UUIDv6 checkpoint id of ``instant`` (lowercase, as LangGraph writes ids):
    an ordered id is >= this string exactly when its time is at or after ``instant``, to the
    microsecond (``checkpoint_id_time(id_at(t)) == t``)."""
    ticks = (instant - UUID_EPOCH) // timedelta(microseconds=1) * 10
    ticks = max(0, min(ticks, (1 << 60) - 1))
    h = f"{ticks:015x}"
    return f"{h[0:8]}-{h[8:12]}-6{h[12:15]}-0000-000000000000"


def bound_time(bound: str) -> datetime | None:
    """The instant of a checkpoint-id bound: ``id_at``'s own, or a shorter prefix of an ordered id
    (``ffffffff``), read as the smallest id it starts; None for anything else."""
    if type(bound) is not str:
        return None
    return checkpoint_id_time(bound + _SMALLEST_ID[len(bound):]) if len(bound) <= 36 else None


_SMALLEST_ID = "00000000-0000-6000-0000-000000000000"


def last_activity(pairs) -> tuple[datetime | None, bool]:
    """The latest time over ``(checkpoint_id, ts)`` pairs and whether any of them is undatable."""
    latest, undatable = None, False
    for cid, ts in pairs:
        t = checkpoint_time(cid, ts)
        if t is None:
            undatable = True
        elif latest is None or t > latest:
            latest = t
    return latest, undatable


# -- the one printed form


def iso_utc(dt: datetime | None) -> str | None:
    """``iso_z`` of a time, None for None."""
    return None if dt is None else iso_z(dt)


# The text of a whole UTC second (``2026-12-01T08:24:52``), by its fields: isoformat() formats
# and reads the offset on every call, twice the cost of this lookup (a listing prints two times a
# thread). Emptied when full, so a listing of any size holds a bounded number.
_SECONDS: dict[tuple, str] = {}
_SECONDS_HELD = 4096


def iso_z(dt: datetime) -> str:
    """ISO 8601 in UTC with ``Z`` (``2026-12-01T08:24:52.123456Z``), text and JSON alike; a time
    without an offset is taken as UTC."""
    if dt.tzinfo is UTC:  # the common case (every time clock.py makes): "+00:00" becomes "Z"
        if type(dt) is not datetime:  # a subclass may format itself
            return dt.isoformat()[:-6] + "Z"
        second = (dt.year, dt.month, dt.day, dt.hour, dt.minute, dt.second)
        text = _SECONDS.get(second)
        if text is None:
            if len(_SECONDS) >= _SECONDS_HELD:
                _SECONDS.clear()
            text = _SECONDS[second] = dt.replace(microsecond=0).isoformat()[:-6]
        us = dt.microsecond
        return f"{text}.{us:06d}Z" if us else text + "Z"  # isoformat()'s fraction: six digits, none at 0
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    elif dt.utcoffset():
        try:
            dt = dt.astimezone(UTC)
        except OverflowError:  # within hours of year 1 or 9999: keep its own offset
            return dt.isoformat()
    return dt.replace(tzinfo=None).isoformat() + "Z"

def parse_checkpoint_ts(raw: object) -> datetime | None:
    """A checkpoint's ``ts`` as symfonic-core parses it; None where it would skip it."""
    if not raw or not isinstance(raw, str):
        return None
    try:
        return datetime.fromisoformat(raw)
    except ValueError:
        return None
