"""Fault injection for the tests of every store-changing driver (erase requests, sweeps, prune,
export): the process is killed as an operator or the OOM killer would, or slowed so it can be
interrupted part-way. Read from the environment once per run; unset means no fault.

- ``SYMFONIC_FAULT_AFTER_THREADS=N``: SIGKILL right after the N-th thread is committed and recorded;
- ``SYMFONIC_FAULT_IN_THREAD=N``: SIGKILL inside the N-th thread's transaction, after its last
  delete and before its COMMIT (the driver's step passes ``Faults.between(n, tables)`` to the store);
- ``SYMFONIC_FAULT_AFTER_PIECES=N``: SIGKILL right after the N-th piece of a thread pruned in pieces
  is committed and recorded (the thread half pruned, between two transactions);
- ``SYMFONIC_FAULT_SLOW_THREAD=SECONDS``: sleep after each thread;
- ``SYMFONIC_FAULT_LATE_FIRST_PAGE=SECONDS``: the run's first page of threads arrives that much
  later (as a sweep's first page does on a very large store);
- ``SYMFONIC_FAULT_STOP_AFTER_COMMIT=N``: the process stops itself (SIGSTOP) right after the N-th
  thread's commit, before its after-commit verification: a test writes the thread meanwhile, as
  an application racing the run would, then continues it (SIGCONT). Deterministic, unlike a race.
- ``SYMFONIC_FAULT_STOP_BEFORE_CHANGE=1``: the process stops itself (SIGSTOP) after the plan and its
  confirmation, before the change's transaction begins (thread rewind): a test writes the thread
  meanwhile, as an application racing the run would, then continues it (SIGCONT).

API: ``Faults.from_env()``; ``faults.between(n, tables)`` (a hook or None), ``faults.after(n)``,
``faults.pause()``, ``faults.late(pages)``, ``faults.after_piece(n)``, ``faults.after_commit(n)`` (a hook or None). ``env_int`` and ``env_float`` read one such variable.
"""

from __future__ import annotations

import os
import signal
import time
from typing import Callable, Iterable, Iterator

from symfonic_cli.errors import UsageError

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol

    class Flushes(Protocol):
        """What a fault flushes before it kills the run: what was shown so far (a stream, a Report)."""

        def flush(self) -> None: ...

FAULT_AFTER_THREADS = "SYMFONIC_FAULT_AFTER_THREADS"
FAULT_IN_THREAD = "SYMFONIC_FAULT_IN_THREAD"
FAULT_SLOW_THREAD = "SYMFONIC_FAULT_SLOW_THREAD"
FAULT_LATE_FIRST_PAGE = "SYMFONIC_FAULT_LATE_FIRST_PAGE"
FAULT_AFTER_PIECES = "SYMFONIC_FAULT_AFTER_PIECES"
FAULT_STOP_AFTER_COMMIT = "SYMFONIC_FAULT_STOP_AFTER_COMMIT"
FAULT_STOP_BEFORE_CHANGE = "SYMFONIC_FAULT_STOP_BEFORE_CHANGE"


def env_int(name: str) -> int | None:
    raw = os.environ.get(name)
    if not raw:
        return None
    try:
        return int(raw)
    except ValueError:
        raise UsageError(f"{name} must be an integer") from None


def env_float(name: str) -> float:
    raw = os.environ.get(name)
    try:
        return max(0.0, float(raw)) if raw else 0.0
    except ValueError:
        return 0.0


def kill(out: "Flushes | None" = None) -> None:
    if out is not None:
        out.flush()  # what the run printed so far reaches its reader first
    os.kill(os.getpid(), signal.SIGKILL)


class Faults:
    def __init__(self, after_threads: int | None = None, in_thread: int | None = None, slow: float = 0.0, out: "Flushes | None" = None,
                 stop_after_commit: int | None = None, after_pieces: int | None = None, stop_before_change: bool = False,
                 late_first_page: float = 0.0) -> None:
        self.after_threads, self.in_thread, self.slow, self.out = after_threads, in_thread, slow, out
        self.stop_after_commit, self.after_pieces = stop_after_commit, after_pieces
        self.stop_before_change, self.late_first_page = stop_before_change, late_first_page

    @classmethod
    def from_env(cls, out: "Flushes | None" = None) -> Faults:
        """The faults the environment asks for; ``out`` is flushed before a kill."""
        return cls(env_int(FAULT_AFTER_THREADS), env_int(FAULT_IN_THREAD), env_float(FAULT_SLOW_THREAD), out,
                   env_int(FAULT_STOP_AFTER_COMMIT), env_int(FAULT_AFTER_PIECES), bool(env_int(FAULT_STOP_BEFORE_CHANGE)),
                   env_float(FAULT_LATE_FIRST_PAGE))

    def between(self, n: int, tables: Iterable[str]) -> Callable[[str], None] | None:
        """For the n-th thread (from 1): a hook the store calls after each table's delete, which
        kills at the last table (every delete has run, uncommitted); None for the other threads."""
        if self.in_thread != n:
            return None
        last = list(tables)[-1]

        def hook(table: str) -> None:
            if table == last:
                kill(self.out)

        return hook

    def after_commit(self, n: int) -> Callable[[], None] | None:
        """For the n-th thread (from 1): a hook the store calls between its commit and the
        verification after it, which stops this process until it is continued."""
        if self.stop_after_commit != n:
            return None

        def hook() -> None:
            if self.out is not None:
                self.out.flush()
            os.kill(os.getpid(), signal.SIGSTOP)

        return hook

    def before_change(self) -> None:
        """After the plan and its confirmation, before the change's transaction: stopped until continued."""
        if self.stop_before_change:
            if self.out is not None:
                self.out.flush()
            os.kill(os.getpid(), signal.SIGSTOP)

    def after(self, n: int) -> None:
        """After the n-th thread is committed and its receipt line written."""
        if self.after_threads is not None and n >= self.after_threads:
            kill(self.out)

    def after_piece(self, n: int) -> None:
        """After the n-th piece of a thread is committed and its receipt line written."""
        if self.after_pieces is not None and n >= self.after_pieces:
            kill(self.out)

    def pause(self) -> None:
        if self.slow:
            time.sleep(self.slow)

    def late(self, pages: Iterable[list]) -> Iterable[list]:
        """``pages``, the first of them read ``late_first_page`` seconds later."""
        if not self.late_first_page:
            return pages
        return self._late(pages)

    def _late(self, pages: Iterable[list]) -> Iterator[list]:
        time.sleep(self.late_first_page)
        yield from pages
