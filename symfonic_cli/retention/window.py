"""Activity windows: ``--inactive-for 90d``, ``--inactive-since DATE``, ``--active-within 7d``,
``--since``/``--until`` (last activity inside the window).

A thread's last activity is the instant its newest checkpoint was written (symfonic_cli/clock.py:
the time in a UUIDv6 id in any case, else the checkpoint's ``ts``). A cut-off becomes a
checkpoint-id bound (``clock.id_at``) the database compares with ids in the one form whose string
order is time order, as a prefilter; every other thread is decided in Python, by instant
(stores/activity.py). A thread with a checkpoint that carries no time is *undatable*: listed with
a warning, never selected by a sweep.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from symfonic_cli import clock
from symfonic_cli.errors import UsageError

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import tzinfo

MAX_AGE_DAYS = clock.MAX_DURATION_DAYS


def parse_age(flag: str, text: str) -> timedelta:
    """A retention period: the clock's duration grammar, a unit required."""
    return clock.parse_duration(text, option=flag)


def parse_instant(flag: str, text: str, tz: tzinfo | None = None) -> datetime:
    """A date or time as ``--since`` reads it (a date is its start); without an offset, in ``tz``
    (the --tz zone the caller passes; UTC by default)."""
    try:
        value = clock.parse_time(text, until=False, tz=tz or clock.UTC).astimezone(clock.UTC)
    except (ValueError, OverflowError):
        raise UsageError(f"{flag} '{text}' is not an ISO 8601 date or time", hint="e.g. 2026-09-01, 2026-09-01T00:00:00Z or 90d (ago)") from None
    if value.year < 1583:
        raise UsageError(f"{flag} '{text}' is before any checkpoint id can be")
    return value


def id_bound(instant: datetime) -> str:
    """The smallest checkpoint id of ``instant`` (clock.id_at)."""
    return clock.id_at(instant)


@dataclass(frozen=True)
class ActivityWindow:
    """Which threads a selection keeps by last activity; the instants are fixed once, at the start."""

    inactive_before: datetime | None = None  # last activity strictly before this
    active_from: datetime | None = None  # last activity at or after this
    # The options as typed (name, text), for the words a person reads (``words``); never compared.
    asked: tuple[tuple[str, str], ...] = field(default=(), compare=False)

    @property
    def last_before(self) -> str | None:
        return id_bound(self.inactive_before) if self.inactive_before else None

    @property
    def last_from(self) -> str | None:
        return id_bound(self.active_from) if self.active_from else None

    def keeps(self, last: datetime | None) -> bool:
        """Whether a thread last active at ``last`` (an instant, clock.py) is in the window."""
        if last is None:
            return False
        if self.inactive_before is not None and not last < self.inactive_before:
            return False
        return not (self.active_from is not None and last < self.active_from)

    def words(self, shown: Callable[[datetime], str]) -> list[str]:
        """What the window asks, in words a person reads correctly, each cut-off instant as
        ``shown`` writes it: ``idle for 30 days or more: last activity before <instant>``.
        The one wording of a window (``threads list``'s empty note)."""
        asked = dict(self.asked)
        out = []
        if self.inactive_before is not None:
            cut_off = shown(self.inactive_before)
            before = f"last activity before {cut_off}"
            if "inactive_for" in asked:
                out.append(f"idle for {clock.duration_words(parse_age('--inactive-for', asked['inactive_for']))} or more: {before}")
            elif "until" in asked:  # the end of what --until names (a day, a minute) is included
                out.append(f"last activity up to the end of --until '{asked['until']}', i.e. before {cut_off}")
            else:
                out.append(before)
        if self.active_from is not None:
            since = f"last activity at or after {shown(self.active_from)}"
            if "active_within" in asked:
                out.append(f"active within the last {clock.duration_words(parse_age('--active-within', asked['active_within']))}: {since}")
            else:
                out.append(since)
        return out

    def describe(self) -> dict:
        """For receipts and manifests: the cut-off instants, UTC."""
        out = {}
        if self.inactive_before is not None:
            out["inactive_before"] = _iso(self.inactive_before)
        if self.active_from is not None:
            out["active_from"] = _iso(self.active_from)
        return out


def _iso(dt: datetime) -> str:
    return clock.iso_z(dt)


def window(*, inactive_for: str | None, inactive_since: str | None, active_within: str | None,
           since: str | datetime | None = None, until: str | datetime | None = None, now: datetime | None = None,
           tz: tzinfo | None = None) -> ActivityWindow | None:
    """The window the options ask for (None when none is given); ``now`` is read once; times typed
    without an offset are in ``tz`` (--tz; UTC by default).

    ``since``/``until`` (``threads list``): last activity inside that window, both ends included,
    read as ``transcript show`` reads them (clock.parse_time), or given as instants (the Python API:
    aware datetimes, checked by api/arguments.py)."""
    if inactive_for is not None and inactive_since is not None:
        raise UsageError("give --inactive-for or --inactive-since, not both")
    if until is not None and (inactive_for is not None or inactive_since is not None):
        raise UsageError("give --until or --inactive-for/--inactive-since, not both")
    if since is not None and active_within is not None:
        raise UsageError("give --since or --active-within, not both")
    if all(v is None for v in (inactive_for, inactive_since, active_within, since, until)):
        return None
    now = now or datetime.now(clock.UTC)
    before = None
    if inactive_for is not None:
        before = now - parse_age("--inactive-for", inactive_for)
    elif inactive_since is not None:
        before = parse_instant("--inactive-since", inactive_since, tz)
    active = now - parse_age("--active-within", active_within) if active_within is not None else None
    if since is not None or until is not None:
        tz = tz or clock.UTC
        if since is not None:
            active = since if isinstance(since, datetime) else clock.time_option("--since", since, until=False, tz=tz, now=now)
        if until is not None:
            end = until if isinstance(until, datetime) else clock.time_option("--until", until, until=True, tz=tz, now=now)
            before = end + timedelta(microseconds=1) if end < datetime.max.replace(tzinfo=end.tzinfo) else end
        if before is not None and active is not None and active >= before:
            raise UsageError("--since is after --until: no thread is active in between")
    if before is not None and active is not None and active >= before:
        raise UsageError("--active-within and --inactive-for/--inactive-since select no thread together", hint="the active window must end before the idle cut-off")
    typed = (("inactive_for", inactive_for), ("inactive_since", inactive_since), ("active_within", active_within),
             ("since", since), ("until", until))
    return ActivityWindow(before, active, tuple((k, v) for k, v in typed if isinstance(v, str)))
