"""``--since``/``--until`` as a person means them.

- ``90s``, ``15m``, ``2h``, ``3d``: that long ago (a unit is required: ``2026`` is not "2026
  minutes ago");
- a date alone: its start for ``--since``, its end for ``--until`` (``--until 2026-12-01`` keeps
  all of that day);
- a time without seconds (or without minutes): for ``--until``, the end of that minute (hour), so
  ``--until 08:24`` keeps 08:24:52;
- a time without an offset is in ``--tz`` (default UTC; an IANA name such as ``Europe/Berlin``,
  or ``UTC``); ``Z`` or an offset is taken as given.

Returns an aware datetime; a ValueError's text names what is wrong (the CLI names the option).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

# "That long ago": the duration grammar of --grace (inputs.parse_duration), with its unit required.
_RELATIVE = re.compile(r"\s*\d+(?:\.\d+)?\s*[smhd]\s*", re.I)
# YYYY-MM-DD, then optionally [T ]HH, :MM, :SS(.ffffff): what was left out sets the span.
_ABSOLUTE = re.compile(
    r"\s*(?P<date>\d{4}-\d\d-\d\d)(?:[T ](?P<hour>\d\d)(?::(?P<minute>\d\d)(?::(?P<second>\d\d(?:[.,]\d{1,6})?))?)?)?"
    r"(?P<offset>Z|z|[+-]\d\d:?\d\d)?\s*"
)


def zone(name: str | None):
    """The tzinfo of ``--tz``: UTC by default, a fixed offset (``+02:00``) or an IANA name."""
    if not name or name.upper() in ("UTC", "Z"):
        return timezone.utc
    m = re.fullmatch(r"([+-])(\d\d):?(\d\d)", name)
    if m:
        if int(m.group(2)) > 23 or int(m.group(3)) > 59:
            raise ValueError(f"offset '{name}' is out of range: use -23:59 to +23:59")
        delta = timedelta(hours=int(m.group(2)), minutes=int(m.group(3)))
        return timezone(-delta if m.group(1) == "-" else delta)
    try:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ValueError(f"unknown time zone '{name}'") from None


def parse_time(text: str, *, until: bool, tz=timezone.utc, now: datetime | None = None) -> datetime:
    if _RELATIVE.fullmatch(text):
        from symfonic_cli.errors import UsageError
        from symfonic_cli.inputs import parse_duration

        try:
            ago = parse_duration(text)
        except UsageError as exc:
            raise ValueError(exc.hint or exc.message) from None
        try:
            return (now or datetime.now(timezone.utc)) - ago
        except OverflowError:
            raise ValueError(f"'{text}' is before year 1") from None
    m = _ABSOLUTE.fullmatch(text)
    if not m:
        return _other_iso(text, tz)
    value = text.strip()
    offset = m.group("offset")
    if offset in ("Z", "z"):
        value = value[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(value.replace(",", "."))
    except ValueError:
        raise ValueError(f"'{text}' is not a time") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=tz)
    if until:
        if m.group("hour") is None:
            span = timedelta(days=1)
        elif m.group("minute") is None:
            span = timedelta(hours=1)
        elif m.group("second") is None:
            span = timedelta(minutes=1)
        else:
            span = None
        if span is not None:
            try:
                dt = dt + span - timedelta(microseconds=1)
            except OverflowError:  # 9999-12-31: its end is the largest time there is
                dt = datetime.max.replace(tzinfo=dt.tzinfo)
    return dt


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
