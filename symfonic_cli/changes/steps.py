"""The per-thread steps of a store-changing run, and the loop over them (erase requests, sweeps,
prune). A driver supplies its plans and one function that changes one thread; these parts do the
rest in the same way for every driver:

    plans -> report.confirm (the caller's step: changes/report.py) -> run_threads(pages, step, recorder, faults)
          -> finish(...) -> recorder.end(...)

- ``thread_step(plan, change, now=..., grace=...)``: runs ``change()`` (one
  transaction that compares what it deletes with the plan and returns ``(deleted, remaining)``
  per table, ``remaining`` counted after the commit) and classifies it: ``ThreadActiveError`` is
  skipped-active, ``ThreadBusy`` busy (a lock not had in time), a ``SymfonicError`` failed (the transaction rolled back), anything else or
  Ctrl-C failed with a ``Stopped`` (whether it committed is unknown). Returns
  ``(ThreadOutcome, Stopped | None)``.
- ``erase_step(store, plan, extra, ..., between=None, idle_before=None)``: the erase's change.
- ``run_threads(pages, step, recorder, faults)``: ``pages`` is an iterable of lists of plans (one
  list, or pages read lazily); ``step(plan, n)`` returns ``(outcome, stop)``. Each outcome is
  recorded (its receipt line on disk) before the next thread starts. The first Ctrl-C stops after
  the thread in flight, a second one at once. Returns the ``Stopped`` that ended it, or None.
  The store's secrets are taken out of each step's reasons there (``scrubbed``), not by each step.
- ``finish(finish_store, location, notes, stop)``: after the last thread (WAL truncation,
  ``--vacuum``); a failure is a note and a stop, the changes are committed.
"""

from __future__ import annotations

import signal
import threading
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Iterable, NamedTuple

from symfonic_cli.changes import plan as ep
from symfonic_cli.errors import EXIT_INTERRUPTED, EXIT_TIME_LIMIT, EXIT_UNEXPECTED, BusyThreads, SymfonicError, ThreadActiveError, ThreadBusy
from symfonic_cli.location import StoreLocation, scrub
from symfonic_cli.model import prune as prune_status

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.model.erase import ExtraTable
    from types import FrameType
    from symfonic_cli.stores.protocol import Store

DEFAULT_BATCH = 500  # threads a counted selection (a sweep, prune) reads and plans at a time
INTERRUPTED = "interrupted (Ctrl-C): stopped after the thread in flight; run the same command again to erase the rest"


class Stopped(NamedTuple):
    """Why a run stopped part-way (the receipt still lists what was done) and its exit code."""

    reason: str
    exit_code: int
    receipt_file_ok: bool = True  # False: the --receipt file itself failed, write no more to it


class Interrupt:
    """Ctrl-C during a run: the first asks to stop between threads, a second one stops at once
    (KeyboardInterrupt: the thread in flight is then reported failed, its commit unknown), unless
    ``cut`` is False (--jobs: the sessions' threads in flight finish and are recorded)."""

    def __init__(self, cut: bool = True) -> None:
        self.asked = False
        self.cut = cut
        self._old: Any = None  # the SIGINT handler to put back (signal.getsignal's types)

    def __enter__(self) -> Interrupt:
        # Not when SIGINT is ignored (a background job of a script, nohup): the parent meant it.
        if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
            self._old = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.asked and self.cut:
            raise KeyboardInterrupt
        self.asked = True

    def __exit__(self, *exc: object) -> None:
        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)


def thread_step(plan: ep.ThreadErasePlan, change: Callable[[], tuple[dict[str, int], dict[str, int]]], *,
                now: datetime, grace: timedelta) -> tuple[ep.ThreadOutcome, Stopped | None]:
    stop = None
    try:
        deleted, remaining = change()
    except ThreadActiveError as exc:
        result = ep.skipped_active(plan, exc.line())
    except ThreadBusy as exc:  # a lock not had within --lock-timeout: rolled back, reported, the run goes on
        result = ep.busy(plan, exc.line())
    except SymfonicError as exc:
        result = ep.failed(plan, exc.line(), now, grace)
    except (Exception, KeyboardInterrupt) as exc:
        what = "interrupted" if isinstance(exc, KeyboardInterrupt) else f"unexpected {type(exc).__name__}: {exc}"
        result = ep.failed(plan, f"{what}; the erase may or may not have committed, rerun to know", now, grace)
        stop = Stopped(what, EXIT_INTERRUPTED if isinstance(exc, KeyboardInterrupt) else EXIT_UNEXPECTED)
    else:
        result = ep.outcome(plan, deleted, remaining, now, grace)
    result.time = datetime.now(timezone.utc)
    return result, stop


def scrubbed(done: tuple[Any, Stopped | None], location: StoreLocation) -> tuple[Any, Stopped | None]:
    """A step's outcome and stop, the store's secrets taken out of their reasons (a driver's error
    may echo the DSN): here, where every operation's steps are run, not in each step."""
    result, stop = done
    if result.reason:
        result.reason = scrub(result.reason, location)
    if stop is not None:
        stop = stop._replace(reason=scrub(stop.reason, location))
    return result, stop


def erase_step(store: Store, plan: ep.ThreadErasePlan, extra: tuple[ExtraTable, ...], *, now: datetime,
               grace: timedelta, between: Callable[[str], None] | None = None,
               idle_before: str | None = None) -> tuple[ep.ThreadOutcome, Stopped | None]:
    """One thread erased (one transaction; the store compares what it deletes with the plan, and
    with ``idle_before`` re-checks its last activity, inside it) and verified after the commit."""

    def change():
        if between is None:
            return store.erase_verified(plan.key, extra, expected=plan.rows, idle_before=idle_before)
        # The fault-injection hook runs between the tables' deletes.
        deleted = store.erase_thread(plan.key, extra, between=between, expected=plan.rows, idle_before=idle_before)
        return deleted, store.remaining_rows(plan.key, extra)

    return thread_step(plan, change, now=now, grace=grace)


def run_deadline(started: float, max_duration: timedelta | None) -> float | None:
    """The monotonic time at which ``--max-duration`` stops a run whose first thread began at
    ``started`` (None: no limit): one rule for one job and for ``--jobs N``."""
    return started + max_duration.total_seconds() if max_duration is not None else None


def time_limit(max_duration: timedelta | None) -> Stopped | None:
    """The stop a run's --max-duration ends it with (None: no limit)."""
    if max_duration is None:
        return None
    from symfonic_cli.changes.plan import human_duration

    return Stopped(f"time limit: --max-duration {human_duration(max_duration)} reached, stopped between two threads; "
                   "run the same command again to continue", EXIT_TIME_LIMIT)


class Pace(NamedTuple):
    """How fast a run goes (--pause, --max-rate, --max-replica-lag): a pause after each thread's
    transaction, at most ``max_rate`` threads a second (thread n starts no sooner than (n - 1) /
    max_rate s after the first), and no transaction while a standby lags more than ``max_replica_lag`` s."""

    pause: float = 0.0
    max_rate: float | None = None
    max_replica_lag: float | None = None

    def wait_before(self, n: int, started: float, interrupt: Interrupt, *, after_change: bool = True) -> None:
        """Before thread ``n`` (counting the threads that changed the store): the pause when the one
        before changed it (``after_change``), and the rate's slot."""
        import time

        if n == 1:
            return
        until = time.monotonic() + (self.pause if after_change else 0.0)
        if self.max_rate is not None:
            until = max(until, started + (n - 1) / self.max_rate)
        while not interrupt.asked:  # in short sleeps: Ctrl-C during a pause stops at once
            left = until - time.monotonic()
            if left <= 0:
                return
            time.sleep(min(left, 0.1))


def pace_of(pause: object, max_rate: object, *, cli: bool, max_replica_lag: object = None) -> Pace | None:
    """--pause ('200ms', '2s'), --max-rate (threads a second) and --max-replica-lag ('10s') as a Pace
    (None: full speed); a bad value is a usage error naming the option (``cli``) or the API's argument."""
    from symfonic_cli.clock import parse_pause
    from symfonic_cli.errors import UsageError
    from symfonic_cli.limits import MAX_RATE

    pause_name, rate_name = ("--pause", "--max-rate") if cli else ("pause", "max_rate")
    lag = None
    if max_replica_lag is not None:
        lag_name = "--max-replica-lag" if cli else "max_replica_lag"
        if not isinstance(max_replica_lag, str):
            raise UsageError(f"{lag_name} must be a duration such as '10s' or '500ms'")
        lag = parse_pause(max_replica_lag, option=lag_name).total_seconds()
        if lag <= 0:
            raise UsageError(f"{lag_name} must be more than 0s")
    if max_rate is not None and (type(max_rate) not in (int, float) or not 0 < float(max_rate) <= MAX_RATE):  # type: ignore[arg-type]
        raise UsageError(f"{rate_name} must be a number of threads a second, more than 0 and at most {MAX_RATE:,.0f}")  # nan too
    if pause is not None and not isinstance(pause, str):
        raise UsageError(f"{pause_name} must be a duration such as '200ms' or '2s'")
    if pause is None and max_rate is None and lag is None:
        return None
    seconds = parse_pause(pause, option=pause_name).total_seconds() if pause is not None else 0.0
    return Pace(seconds, float(max_rate) if max_rate is not None else None, lag)  # type: ignore[arg-type]


def check_replicas(pace: Pace | None, location: StoreLocation) -> None:
    """--max-replica-lag on a store kind without replicas (SQLite): a usage error before anything."""
    if pace is None or pace.max_replica_lag is None:
        return
    from symfonic_cli.kinds import KINDS

    kind = KINDS[location.kind]
    if not kind.server:  # a file has no replicas
        from symfonic_cli.errors import UsageError

        raise UsageError(f"--max-replica-lag applies to database servers (PostgreSQL, MongoDB): a {kind.label} file has no replicas")


# A thread whose outcome was decided from its plan, without a transaction (nothing to prune, skipped,
# not found, already erased): no pause after it, and it does not count towards --max-rate, so a rerun
# of a window that stopped passes the threads the last run did quickly and reaches the rest.
NO_TRANSACTION = frozenset({prune_status.NOTHING, prune_status.SKIPPED, ep.NOT_FOUND, ep.ALREADY_ERASED})

LAG_READ_EVERY = 0.2  # seconds: a lag under the bound is read again no sooner (a query a thread costs)


class _LagReader:
    """``read`` (the store's replica_lag), its last answer reused for ``seconds`` while it was within
    ``limit``; ``stamp()`` reads at once (right after a commit: the primary's WAL position is then
    timed as the commit's, not as of the next read)."""

    def __init__(self, read: Callable[[], tuple[float, str] | None], seconds: float, limit: float) -> None:
        self.read, self.seconds, self.limit = read, seconds, limit
        self.last: tuple[float, str] | None = None
        self.at = -1e9

    def stamp(self) -> tuple[float, str] | None:
        import time

        self.last, self.at = self.read(), time.monotonic()
        return self.last

    def __call__(self) -> tuple[float, str] | None:
        import time

        if time.monotonic() - self.at >= self.seconds or (self.last is not None and self.last[0] > self.limit):
            return self.stamp()
        return self.last


def lag_text(got: tuple[float, str], limit: float) -> str:
    """The progress line of a wait for a standby: its lag, or why it has none to read (gone, not reported)."""
    import math

    from symfonic_cli.render import escape_inline as esc

    if math.isinf(got[0]):
        return f"waiting: standby {esc(got[1])}; --max-replica-lag {limit:g} s"
    return f"waiting: replica lag {got[0]:.1f} s ({esc(got[1])}) is above --max-replica-lag {limit:g} s"


def wait_for_replicas(replicas: Callable[[], tuple[float, str] | None], limit: float, interrupt: Interrupt | None,
                      deadline: float | None, progress: Any) -> bool:
    """Before a transaction: while the most lagging standby is more than ``limit`` s behind, or a
    standby of the run's start is gone or its position unreported (lag ``inf``), wait (said once on
    stderr and on the progress line). False when ``deadline`` passed while waiting."""
    import time

    told = False
    while interrupt is None or not interrupt.asked:
        got = replicas()
        if got is None or got[0] <= limit:
            if told:
                progress.waiting(None)
            return True
        text = lag_text(got, limit)
        if not told:
            progress.say(text)
            told = True
        progress.waiting(text)
        if deadline is not None and time.monotonic() >= deadline:
            return False
        time.sleep(0.25)
    return True


def run_threads(pages: Iterable[list], step, recorder, faults, *, location: StoreLocation,
                max_duration: timedelta | None = None, pace: Pace | None = None,
                replicas: Callable[[], tuple[float, str] | None] | None = None) -> Stopped | None:
    """The loop over the threads; with ``max_duration`` it stops cleanly before the next thread
    once that much time has passed since the first one started (not since the first page was asked
    for); ``pace`` waits between threads, and with its ``max_replica_lag`` while ``replicas()``
    (the store's replica_lag) says more."""
    import time

    n = changed = 0
    last_changed = False  # whether the last thread ran a transaction (the pause comes after one)
    stop: Stopped | None = None
    started = time.monotonic()  # again as the first thread begins: reading the first page is not counted
    deadline: float | None = None
    lag = pace.max_replica_lag if pace is not None and replicas is not None else None
    reader = _LagReader(replicas, min(LAG_READ_EVERY, lag / 4), lag) if lag is not None and replicas is not None else None
    try:
        if reader is not None:
            reader()  # the standbys and the primary's WAL position as the run starts (and the role may read them: else exit 4)
        with Interrupt() as interrupt:
            for page in faults.late(pages):
                for plan in page:
                    if n == 0:
                        started = time.monotonic()
                        deadline = run_deadline(started, max_duration)
                    if pace is not None:
                        pace.wait_before(changed + 1, started, interrupt, after_change=last_changed)
                    if reader is not None and not wait_for_replicas(reader, reader.limit, interrupt, deadline, recorder.progress):
                        return time_limit(max_duration)
                    if interrupt.asked:
                        return Stopped(INTERRUPTED, EXIT_INTERRUPTED)
                    if deadline is not None and time.monotonic() >= deadline:
                        return time_limit(max_duration)
                    n += 1
                    result, stop = scrubbed(step(plan, n), location)
                    last_changed = result.status not in NO_TRANSACTION
                    changed += last_changed
                    if reader is not None and last_changed:
                        reader.stamp()  # the WAL position the commit reached, timed now
                    file_stop = recorder.thread(result)  # recorded even when the step stops the run
                    stop = stop or file_stop
                    if stop is not None:
                        return stop
                    faults.after(n)
                    faults.pause()
            if interrupt.asked and recorder.done < recorder.total:
                return Stopped(INTERRUPTED, EXIT_INTERRUPTED)
    except KeyboardInterrupt:  # a second Ctrl-C between two threads
        return Stopped(INTERRUPTED, EXIT_INTERRUPTED)
    except SymfonicError as exc:  # selecting or planning the next page failed
        return Stopped(f"stopped: {scrub(exc.line(), location)}", exc.exit_code)
    finally:
        recorder.progress.end(recorder.done)
    return None


WAIT_POLL_SECONDS = 0.5


def hold_run_lock(store: Store, operation: str, *, wait: bool, location: StoreLocation,
                  told: Callable[[str], None] | None = None) -> None:
    """One erase or prune per store at a time: the store's run lock taken for this run (released when
    the store is closed). Held by another run: StoreLocked naming the holder (exit 10), or with
    ``wait`` the holder told once to ``told`` (the caller's: a line on stderr) and a try every half
    second until it is free (Ctrl-C: 130)."""
    import time

    from symfonic_cli.errors import StoreLocked
    from symfonic_cli.render import escape_inline as esc

    said = False
    while True:
        holder = store.take_run_lock(operation)
        if holder is None:
            return
        if not wait:
            raise StoreLocked(f"another run is changing {esc(location.display)}: {esc(holder)}; nothing was done",
                              hint="--wait waits for it to finish")
        if not said and told is not None:
            told(holder)
            said = True
        time.sleep(WAIT_POLL_SECONDS)


def busy_error(count: int, verb: str) -> BusyThreads:
    """The end of a run with threads skipped as busy (exit 9): the rest is done, a rerun takes them."""
    return BusyThreads(f"{count} thread(s) busy: a lock was not had within --lock-timeout; they were left as they were, "
                       f"the others {verb}", hint="run the same command again to take them, or raise --lock-timeout")


def finish(store_finish: Callable[[], list[str]], location: StoreLocation, notes: list[str], stop: Stopped | None, *,
           wait: bool = False, told: Callable[[str], None] | None = None, erased: bool = True) -> Stopped | None:
    """After the last thread: the store's own finish (WAL truncation, ``--vacuum``). The changes are
    committed: a failure here is a note and a stop, and the receipt is still printed and written.
    A -wal a reader kept from being truncated (WalKept) is said as what is left; with ``wait`` the
    finish is tried again every half second until it is truncated (said once to ``told``; Ctrl-C
    stops waiting). A run that ``erased`` nothing left none of its text there: a note only."""
    import time

    from symfonic_cli.errors import WalKept

    said = False
    while True:
        try:
            notes += store_finish()
        except WalKept as exc:
            notes += exc.notes
            if not erased:
                notes.append("the write-ahead log could not be truncated (a reader holds a snapshot); this run erased nothing")
                return stop
            if wait:
                if not said and told is not None:
                    told(f"the readers of {location.display}-wal (a snapshot held open)")
                    said = True
                try:
                    time.sleep(WAIT_POLL_SECONDS)
                    continue
                except KeyboardInterrupt:
                    pass
            reason = scrub(exc.message, location)
            notes.append(reason)
            stop = stop or Stopped(reason, exc.exit_code)
        except SymfonicError as exc:
            reason = f"finishing after the erase failed: {scrub(exc.line(), location)}"
            notes.append(reason)
            stop = stop or Stopped(reason, exc.exit_code)
        return stop
