"""What a store-changing run (an erase request, a retention sweep, a prune, an export) tells its
caller as it goes: typed events, never text. The drivers (erase/run.py, erase/sweep.py,
prune/run.py, export/run.py) call a
``Report`` the caller supplies; the caller renders the events (the command line: cli/report.py's
``TextReport``) or keeps them (the Python API: api/report.py). Nothing per thread is kept here: a
sweep of any size streams through ``thread`` and ``planned`` one record at a time.

Events, in the order a run sends them:
- ``opened(warnings)``: a store opened, with what the driver warned about (its ``open_warnings``);
- ``misses(misses)``: requested keys with no row (an erase request), with their near misses;
- ``plan(view)`` (a plan shown, nothing asked: ``--yes``, a dry run) or ``confirm(step)`` (the
  caller's typed confirmation: shows ``step.view`` and asks, raising ``NotConfirmedError`` for a
  no; the base asks no one and raises for anything to confirm);
- a dry run of a sweep or a prune, streamed: ``dry_run_begin(view, head)``, ``planned(record)``
  per thread, ``dry_run_end(view, tail)``;
- a real run: ``begin(head)``, ``thread(done)`` per thread (its receipt entry and outcome: the
  record ``-f jsonl`` prints), ``end(tail, line_head)``; ``end`` is also called, with a
  ``stopped`` tail, when an error ends the run after ``begin``;
- ``ended(outcome)``: how the run ended, as data (an EraseOutcome, an export's ExportResult), when
  it was not streamed; an error that ends the run with one carries it, told here before it is raised;
- ``waiting(holder)``: another run holds the store (``--wait``); an export's ``leftover(path,
  error)`` (a partial bundle removed, or not) and ``warning(key, text)`` (a thread read with a warning); ``progress(verb, total, enabled)``
  hands the run its progress reporter (progress.py), which calls the caller's ``on_progress``.

``shows_plan``: whether the caller wants the plan when nothing is asked (a reader's formats);
``streams``: whether the caller takes a sweep's or a prune's record as it goes (``begin``...``end``)
rather than the run's end (``EraseOutcome``) at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, cast

from symfonic_cli.errors import NotConfirmedError

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

    from symfonic_cli.changes.plan import Miss
    from symfonic_cli.model.erase import ExtraTable, ThreadErasePlan
    from symfonic_cli.progress import Progress


@dataclass(frozen=True)
class RequestView:
    """An erase request's plan: every requested thread (or every one under a prefix)."""

    store_name: str
    plans: list[ThreadErasePlan]
    misses: dict[str, Miss]
    now: datetime
    grace: timedelta
    by_prefix: bool
    extra: tuple[ExtraTable, ...] = ()
    notes: list[str] = field(default_factory=list)  # said under the plan (threads erased in one huge transaction)

    def confirmation(self, from_stdin: bool) -> Confirmation:
        """What the operator confirms: the threads this plan erases (plan.to_erase), or the key of the only one."""
        todo = [p for p in self.plans if p.total]
        return Confirmation(self, "erase", len(todo), todo[0].key if len(todo) == 1 else None, from_stdin=from_stdin)


@dataclass(frozen=True)
class SweepView:
    """A retention sweep's plan: counted in the database, the first threads by key (``sample``)."""

    store_name: str
    selection: dict[str, Any]
    total: int
    batch: int
    now: datetime
    grace: timedelta
    undatable: int = 0
    sample: list[ThreadErasePlan] = field(default_factory=list)


@dataclass(frozen=True)
class Confirmation:
    """What the caller's confirmation step is asked: the plan to show and what to confirm: the
    number of threads, or the key of the only one (``key``); ``threads`` 0: nothing to confirm,
    the plan is shown where the answer would be read."""

    view: Any  # RequestView, SweepView, prune/records.PruneView
    operation: str  # "erase" or "prune"
    threads: int
    key: str | None = None
    from_stdin: bool = False  # standard input held the keys: the answer comes from elsewhere

    # The one wording of a confirmation: its question and refusals name the run's own action.
    @property
    def question(self) -> str:
        if self.key is not None:
            return f"Type the thread key to {self.operation} it"
        return f"Type the number of threads ({self.threads}) to {self.operation} them"

    @property
    def expected(self) -> str:
        return self.key if self.key is not None else str(self.threads)

    def refused(self, why: str) -> str:
        """The refusal line: ``not confirmed<why>, nothing erased`` (or pruned)."""
        return f"not confirmed{why}, nothing {_DONE.get(self.operation, 'changed')}"

    def no_terminal(self) -> NotConfirmedError:
        return NotConfirmedError(self.refused(": no terminal to confirm on"),
                                 hint=f"pass --yes to {self.operation} without a prompt")


_DONE = {"erase": "erased", "prune": "pruned", "rewind": "written"}


@dataclass(frozen=True)
class ThreadDone:
    """One thread done: its receipt entry (the ``thread`` record of ``-f jsonl`` without the head),
    the outcome (changes/plan.ThreadOutcome or prune/records.PruneOutcome), the run's head, and how
    many threads are done of how many."""

    entry: dict[str, Any]
    outcome: Any
    head: dict[str, Any]
    done: int
    total: int


class Report:
    """The events of a run, received by no one: nothing shown, nothing asked (a confirmation that
    is needed raises ``NotConfirmedError``, exit 6: ``yes`` is the way). ``on_thread``: called with
    each ``ThreadDone`` (and each planned record of a streamed dry run, as a dict)."""

    shows_plan = False
    streams = False

    def __init__(self, on_thread: Callable[[Any], None] | None = None) -> None:
        self.on_thread = on_thread

    def opened(self, warnings: Sequence[str]) -> None:
        pass

    def misses(self, misses: dict[str, Miss]) -> None:
        pass

    def plan(self, view: Any) -> None:
        pass

    def confirm(self, step: Confirmation) -> None:
        if step.threads:
            raise step.no_terminal()

    def dry_run_begin(self, view: Any, head: dict[str, Any]) -> None:
        pass

    def planned(self, record: dict[str, Any]) -> None:
        if self.on_thread is not None:
            self.on_thread(record)

    def dry_run_end(self, view: Any, tail: dict[str, Any]) -> None:
        pass

    def begin(self, head: dict[str, Any]) -> None:
        pass

    def thread(self, done: ThreadDone) -> None:
        if self.on_thread is not None:
            self.on_thread(done)

    def end(self, tail: dict[str, Any], line_head: dict[str, Any] | None = None) -> None:
        pass

    def ended(self, outcome: Any) -> None:
        """How the run ended (an EraseOutcome: a dry run's plan, or the receipt), told by the driver
        before the error that ends the run is raised; a record the report streamed ends with ``end``."""

    @property
    def open(self) -> bool:
        """A streamed record begun and not ended (an error after the threads ends it)."""
        return False

    def waiting(self, holder: str) -> None:
        pass

    def leftover(self, path: str, error: str | None = None) -> None:
        """An export found a partial bundle an interrupted export left: removed (``error`` None) or not."""

    def warning(self, key: str, text: str) -> None:
        """Something read from a thread could not be read as it should (an export goes on)."""

    def progress(self, verb: str, total: int, enabled: bool | None,
                 told: Callable[[str, int, int], None] | None = None) -> Progress:
        """The run's progress reporter: ``told`` (the Environment's ``on_progress``) after each
        thread; here no line is drawn."""
        from symfonic_cli.progress import Progress

        return Progress(cast("TextIO", _Nowhere()), verb, total, enabled=False, report=told)

    def flush(self) -> None:
        """What was shown so far reaches its reader (before a fault hook kills the run)."""


class _Nowhere:
    """The progress line of a run no one watches (Progress draws nothing when not enabled)."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False
