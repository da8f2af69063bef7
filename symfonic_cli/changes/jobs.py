"""``--jobs N`` for the counted runs (prune, retention sweeps) on a database server: N sessions,
each with its own connection, take the threads; the run lock stays the one the run's own session
holds. The loop ``steps.run_threads`` runs in one session, this one in N:

- this (the recording) thread reads the selection a page of keys at a time and hands it out in
  chunks through a bounded queue (memory: a page and ``2 * jobs`` chunks, whatever the store's size);
- each session plans its chunk, then changes its threads one bounded transaction at a time, as
  with one job (the same step); its next thread starts once the last one's receipt line is on disk;
- every record (receipt line, the caller's report, progress) is written by this thread: a session
  hands it over and waits (``Lane.in_main``), so the receipt has one writer and one line per thread;
- the pace: ``--pause`` after each of a session's transactions, ``--max-rate`` for the run's
  threads together, ``--max-replica-lag`` read by each session before its transactions;
- Ctrl-C, ``--max-duration``, an unexpected error or a failed receipt file stop the run: no session
  starts another thread, the threads in flight finish (each is one transaction, its statements
  bounded by ``--lock-timeout``) and are recorded. A second Ctrl-C does not cut them short.

Threads, not processes (migrate's workers are processes: it decodes and re-encodes every
checkpoint): a change here waits on the database most of its time, and the record stays in one place.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from symfonic_cli.changes.steps import (
    INTERRUPTED,
    LAG_READ_EVERY,
    NO_TRANSACTION,
    Interrupt,
    Pace,
    Stopped,
    _LagReader,
    run_deadline,
    scrubbed,
    time_limit,
    wait_for_replicas,
)
from symfonic_cli.changes.faults import Faults
from symfonic_cli.errors import EXIT_INTERRUPTED, EXIT_UNEXPECTED, SymfonicError, UsageError
from symfonic_cli.location import StoreLocation, scrub

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.stores.protocol import Store

CHUNK = 16  # threads a session takes at a time (planned together: one read for 16 threads)
POLL = 0.05  # seconds the recording thread waits for a message before feeding the queue again


def check_jobs(jobs: int, location: StoreLocation, *, sweep: bool = True) -> None:
    """More than one job where it cannot be: a usage error (exit 2) before anything is opened."""
    if jobs == 1:
        return
    from symfonic_cli.kinds import KINDS

    kind = KINDS[location.kind]
    if not kind.server:
        raise UsageError(f"--jobs applies to database servers (PostgreSQL, MongoDB): a {kind.label} file has one writer")
    if not sweep:
        raise UsageError("--jobs applies to prune and to a retention sweep (--inactive-for, --inactive-since); "
                         "an erase of given threads runs in one session")


Step = Callable[[Any, int], tuple[Any, Stopped | None]]


class _Proxy:
    """A session's view of the run's progress line: what it says is shown by the recording thread."""

    def __init__(self, lane: Lane, progress: Any) -> None:
        self.lane, self.progress = lane, progress

    def say(self, text: str) -> None:
        self.lane.in_main(lambda: self.progress.say(text))

    def waiting(self, text: str | None) -> None:
        self.lane.in_main(lambda: self.progress.waiting(text))


@dataclass
class Lane:
    """One session of the run: its own store (connection), and its way to the recording thread."""

    store: Store
    run: _Run
    progress: Any = None
    changed: bool = False  # whether this session's last thread ran a transaction (the pause comes after one)

    def in_main(self, call: Callable[[], Any]) -> Any:
        """``call()`` run by the recording thread (the one writer of the record); its result, or its error raised here."""
        box: dict[str, Any] = {}
        done = threading.Event()
        self.run.outbox.put((call, box, done))
        while not done.wait(0.5):
            if self.run.closed:
                raise RuntimeError("the run's recording thread ended")
        if "error" in box:
            raise box["error"]
        return box.get("value")


@dataclass
class _Run:
    outbox: queue.Queue = field(default_factory=queue.Queue)
    work: queue.Queue = field(default_factory=queue.Queue)
    stop: Stopped | None = None
    crash: BaseException | None = None
    closed: bool = False
    fed: bool = False  # every chunk is in the queue (or none will be: the run stops)
    lock: threading.Lock = field(default_factory=threading.Lock)
    n: int = 0  # threads started
    slots: int = 0  # --max-rate's slots taken: threads that changed the store, and those in flight
    recorder: Any = None
    max_duration: timedelta | None = None
    started: float | None = None  # when the run's first thread began: --max-duration and --max-rate count from it

    def clock(self) -> tuple[float, float | None]:
        """When the run's first thread began (now, for the first to ask) and the run's deadline."""
        with self.lock:
            if self.started is None:
                self.started = time.monotonic()
            started = self.started
        return started, run_deadline(started, self.max_duration)

    def stopped(self, stop: Stopped) -> None:
        with self.lock:
            if self.stop is None:  # the first reason is the run's
                self.stop = stop

    def slot(self) -> int:
        with self.lock:
            self.slots += 1
            return self.slots

    def unslot(self) -> None:
        """A thread that ran no transaction gives its --max-rate slot back."""
        with self.lock:
            self.slots -= 1

    def number(self) -> int:
        """The next thread's number in the run (from 1; the fault hooks count by it)."""
        with self.lock:
            self.n += 1
            return self.n


def run_jobs(pages: Iterable[list], plan: Callable[[Store, list], list], make_step: Callable[[Lane], Step], recorder: Any, faults: Faults, *,
             jobs: int, sessions: list[Store], store: Store, location: StoreLocation, max_duration: timedelta | None = None,
             pace: Pace | None = None) -> Stopped | None:
    """``steps.run_threads`` over ``jobs`` sessions (``sessions``: opened, prepared, each its own
    connection; ``store``: the run's own, which reads the pages and holds the run lock). ``pages``
    lists keys (or plans, which ``plan(store, items)`` returns as they are); ``make_step(lane)``
    is the driver's step on a lane's store. Returns the ``Stopped`` that ended the run, or None."""
    run = _Run(work=queue.Queue(maxsize=2 * jobs), recorder=recorder, max_duration=max_duration)
    lag = pace.max_replica_lag if pace is not None else None
    if lag is not None:
        try:
            store.replica_lag()  # where the primary's WAL is as the run starts (and the role may read it: else exit 4)
        except SymfonicError as exc:
            recorder.progress.end(recorder.done)
            return Stopped(f"stopped: {scrub(exc.line(), location)}", exc.exit_code)
    lanes = [Lane(s, run) for s in sessions]
    for lane in lanes:
        lane.progress = _Proxy(lane, recorder.progress)
    try:
        with Interrupt(cut=False) as interrupt:
            workers = [threading.Thread(target=_work, name=f"symfonic-job-{i + 1}", daemon=True,
                                        args=(lane, run, plan, make_step(lane), faults, interrupt, pace, location))
                       for i, lane in enumerate(lanes)]
            for w in workers:
                w.start()
            _record(run, _chunks(faults.late(pages)), workers, interrupt, location)
            if run.crash is not None:
                raise run.crash
            if run.stop is None and interrupt.asked and recorder.done < recorder.total:
                run.stopped(Stopped(INTERRUPTED, EXIT_INTERRUPTED))
    finally:
        run.closed = True
        recorder.progress.end(recorder.done)
    return run.stop


def _chunks(pages: Iterable[list]) -> Iterator[list]:
    for page in pages:
        for i in range(0, len(page), CHUNK):
            yield page[i:i + CHUNK]


def _record(run: _Run, chunks: Iterator[list], workers: list[threading.Thread], interrupt: Interrupt,
            location: StoreLocation) -> None:
    """The recording thread: hands out chunks while there is room and no stop, runs what the
    sessions hand over, until every session has ended."""
    pending: list | None = None
    while True:
        while not run.fed:
            if run.stop is not None or interrupt.asked:
                run.fed = True
                break
            if pending is None:
                try:
                    pending = next(chunks)
                except StopIteration:
                    run.fed = True
                    break
                except SymfonicError as exc:  # selecting the next page failed
                    run.stopped(Stopped(f"stopped: {scrub(exc.line(), location)}", exc.exit_code))
                    run.fed = True
                    break
            try:
                run.work.put_nowait(pending)
            except queue.Full:
                break
            pending = None
        try:
            call, box, done = run.outbox.get(timeout=POLL)
        except queue.Empty:
            if not any(w.is_alive() for w in workers) and run.outbox.empty():
                return
            continue
        try:
            box["value"] = call()
        except BaseException as exc:  # handed back to the session that asked
            box["error"] = exc
        finally:
            done.set()


def _work(lane: Lane, run: _Run, plan: Callable[[Store, list], list], step: Step, faults: Faults, interrupt: Interrupt,
          pace: Pace | None, location: StoreLocation) -> None:
    """One session: chunks from the queue until it is empty for good or the run stops, a thread at a time."""
    lag = pace.max_replica_lag if pace is not None else None
    replicas = _LagReader(lane.store.replica_lag, min(LAG_READ_EVERY, lag / 4), lag) if lag is not None else None
    try:
        while run.stop is None:
            try:
                chunk = run.work.get(timeout=POLL)
            except queue.Empty:
                if run.fed and run.work.empty():  # fed is set after the last chunk went in
                    return
                continue
            if interrupt.asked:
                run.stopped(Stopped(INTERRUPTED, EXIT_INTERRUPTED))
                return
            try:
                plans = plan(lane.store, chunk)
            except SymfonicError as exc:  # planning the chunk failed
                run.stopped(Stopped(f"stopped: {scrub(exc.line(), location)}", exc.exit_code))
                return
            for p in plans:
                stop = _one(lane, run, p, step, faults, interrupt, pace, replicas, location)
                if stop is not None:
                    run.stopped(stop)
                if run.stop is not None:
                    return
    except BaseException as exc:  # a defect: the run stops, the recording thread raises it
        with run.lock:
            run.crash = run.crash or exc
        run.stopped(Stopped(f"unexpected {type(exc).__name__}", EXIT_UNEXPECTED))


def _one(lane: Lane, run: _Run, plan: Any, step: Step, faults: Faults, interrupt: Interrupt,
         pace: Pace | None, replicas: _LagReader | None, location: StoreLocation) -> Stopped | None:
    """One thread on this session, with the checks ``run_threads`` makes before each (the pace, the
    replicas, Ctrl-C, the time limit); recorded by the recording thread before the next."""
    started, deadline = run.clock()
    if pace is not None:
        # --pause after this session's own last change; --max-rate over the run's changing threads together
        # (a slot given back by a thread that changed nothing is not taken again: the rate is never passed)
        pace.wait_before(run.slot(), started, interrupt, after_change=lane.changed)
    if replicas is not None and not wait_for_replicas(replicas, replicas.limit, interrupt, deadline, lane.progress):
        return time_limit(run.max_duration)
    if interrupt.asked:
        return Stopped(INTERRUPTED, EXIT_INTERRUPTED)
    if deadline is not None and time.monotonic() >= deadline:
        return time_limit(run.max_duration)
    if run.stop is not None:
        return None
    result, stop = scrubbed(step(plan, run.number()), location)
    lane.changed = result.status not in NO_TRANSACTION
    if pace is not None and not lane.changed:
        run.unslot()
    if replicas is not None and lane.changed:
        replicas.stamp()  # the WAL position the commit reached, timed now
    recorder = run.recorder

    def record() -> Stopped | None:
        file_stop = recorder.thread(result)  # recorded even when the step stops the run
        faults.after(recorder.done)
        return file_stop

    file_stop = lane.in_main(record)
    faults.pause()
    return stop or file_stop


def open_sessions(jobs: int, open_session: Callable[[], Store], lock_timeout: float,
                  prepare: Callable[[Store], Any]) -> list[Store]:
    """The run's ``jobs`` sessions, each its own connection opened by ``open_session`` (the
    caller's opener, the one the run's own store came from, writable), with the run's lock timeout
    and ``prepare``d (the driver's checks) as the run's own store is; opened before the plan is
    shown, so a server refusing more connections stops the run before anything is changed."""
    sessions: list[Store] = []
    try:
        for _ in range(jobs):
            s = open_session()
            sessions.append(s)
            s.set_lock_timeout(lock_timeout)
            prepare(s)
    except BaseException:
        close_sessions(sessions)
        raise
    return sessions


def close_sessions(sessions: list[Store]) -> None:
    for s in sessions:
        try:
            s.close()
        except Exception:  # closing anyway; the server ends the session when the socket closes
            pass
