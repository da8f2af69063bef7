"""The record of a store-changing run: the ``--receipt`` file's lines, and each thread told to the
caller's Report (changes/report.py: the line a reader sees, the JSON record, the progress step: the
caller renders them). Shared by erase requests, sweeps and prune.

API:
- ``store_name(location)``: the store as a receipt names it (an absolute path, else the masked URL);
- ``default_operator()``: who runs it when ``--operator`` is not given;
- ``receipt_header(...)``: who, when, where and what was asked: a receipt's head (each
  receipt-file line carries it); ``new_header(location, store, now, operator=..., ticket=...,
  selection=..., vacuum=...)``: a new run's, with the store identity;
- ``open_receipt(path, dry_run=...)``: the ``ReceiptFile`` (opened, and checked, before anything
  is deleted), or None without ``--receipt``;
- ``Recorder(env, report, header=..., kind=..., grace=..., receipt_file=..., total=...,
  stream=..., keep=..., progress=...)``:
  ``start(**fields)`` writes the ``start`` line (a failure: ``ReceiptError``, nothing changed) and
  begins the streamed record (``stream``); ``thread(outcome)`` records one thread (file line, the
  report's ``ThreadDone``, progress) and returns a ``Stopped`` when the receipt file failed; ``end(tail, stop)``
  writes the ``end`` line and returns the stop to report. ``counts``, ``done``, ``failed``,
  ``unverified``, ``recent`` and (with ``keep``) ``outcomes`` are what it saw.
"""

from __future__ import annotations

import os
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any

from symfonic_cli import __version__
from symfonic_cli.environment import Environment
from symfonic_cli.changes import plan as ep
from symfonic_cli.changes.receipt_file import ReceiptFile, ReceiptWriteError
from symfonic_cli.changes.report import Report, ThreadDone
from symfonic_cli.changes.steps import Stopped
from symfonic_cli.clock import iso_utc
from symfonic_cli.errors import EXIT_STORE, ReceiptError
from symfonic_cli.location import StoreLocation

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.stores.protocol import Store


def default_operator() -> str:
    """Who erases: the login name (getpass: LOGNAME, USER, ..., then the password
    database), else the numeric user id; never empty."""
    import getpass

    try:
        name = getpass.getuser()
    except Exception:  # no variable and no password entry (a container's arbitrary uid)
        name = ""
    return name or f"uid:{os.getuid()}"


def store_name(location: StoreLocation) -> str:
    """The store as the receipt names it: an absolute path for a file, else the masked URL."""
    if location.path:  # a file store: its absolute path
        return os.path.abspath(location.path)
    return location.display


def receipt_header(*, receipt_id: str, now: datetime, version: str, store: str, kind: str, operator: str, ticket: str | None,
                   selection: dict[str, Any], vacuum: bool, identity: dict[str, Any] | None = None) -> dict[str, Any]:
    """Who, when, where and what was asked: the start of the receipt and of each receipt-file line.
    ``identity`` (the store's ``store_identity()``) names the tables: what "the same store" means."""
    return {
        "receipt_id": receipt_id,
        "time": iso_utc(now),
        "tool": "symfonic",
        "tool_version": version,
        "store": store,
        "store_kind": kind,
        "store_identity": identity,
        "operator": operator,
        "ticket": ticket,
        "selection": selection,
        "vacuum": vacuum,
    }


def new_header(location: StoreLocation, store: Store, now: datetime, *, operator: str | None, ticket: str | None,
               selection: dict[str, Any], vacuum: bool = False) -> dict[str, Any]:
    """A new run's receipt head (receipt_header): a fresh receipt id, this version, the
    store's name and identity (the opened ``store``'s ``store_identity()``)."""
    return receipt_header(
        receipt_id=str(uuid.uuid4()), now=now, version=__version__, store=store_name(location), kind=location.kind,
        operator=operator or default_operator(), ticket=ticket, selection=selection, vacuum=vacuum,
        identity=store.store_identity(),
    )


def open_receipt(path: str | None, *, dry_run: bool, store: StoreLocation | None = None) -> ReceiptFile | None:
    # Opened before anything is deleted: an unwritable audit file must stop the run, not follow it.
    return ReceiptFile(path, writable=not dry_run, store=store) if path else None


class RunRecord:
    """What every store-changing run records, whatever its outcomes (erase's Recorder, prune's
    PruneRecorder): the receipt file's start, thread and end lines; each thread told to the
    caller's ``report`` (``stream``: the record begun at the start, for a caller that streams it),
    and the progress step."""

    verb = "erased"

    def __init__(self, env: Environment, report: Report, *, header: dict[str, Any], receipt_file: ReceiptFile | None,
                 total: int, stream: bool, progress: bool | None) -> None:
        self.header, self.receipt_file, self.total = header, receipt_file, total
        self.report = report
        self.stream = stream and report.streams
        self.progress = report.progress(self.verb, total, progress, env.on_progress)
        self.done = 0
        self._ended: str | None = None
        self.file_ok = True  # False once a line could not be written: nothing more goes to the file

    def start(self, **fields: Any) -> None:
        if self.receipt_file is not None:
            try:
                self.receipt_file.append({"record": "start", **self.header, **fields})
            except ReceiptWriteError as exc:
                raise ReceiptError(f"{exc}; nothing {self.verb}") from None
        if self.stream:
            self.report.begin(self.header)

    def _record(self, entry: dict[str, Any], outcome: Any) -> Stopped | None:
        """One thread's receipt line, on disk before the next thread starts; then the thread told
        to the caller, and the progress step."""
        self.done += 1
        stop = None
        if self.receipt_file is not None and self.file_ok:
            try:
                self.receipt_file.append({"record": "thread", **self.header, **entry})
            except ReceiptWriteError as exc:
                self.file_ok = False
                stop = Stopped(str(exc), EXIT_STORE, False)
        self.progress.clear()
        self.report.thread(ThreadDone(entry, outcome, self.header, self.done, self.total))
        self.progress.step(self.done)
        return stop

    def kept_at(self, stop: Stopped | None) -> str | None:
        """The --receipt file's absolute path when it holds the whole receipt, else None."""
        if self.receipt_file is None or not self.file_ok or (stop is not None and not stop.receipt_file_ok):
            return None
        return os.path.abspath(self.receipt_file.path)

    def end_times(self) -> dict[str, Any]:
        """The ``end`` record's times: when the run ended (taken once), when it began."""
        if self._ended is None:
            self._ended = iso_utc(datetime.now(timezone.utc))
        return {"time": self._ended, "started": self.header["time"]}

    def end(self, tail: dict[str, Any], stop: Stopped | None) -> Stopped | None:
        """The ``end`` line (its ``time`` is when the run ended, ``started`` when it began);
        returns the stop to report (a failed end line is one)."""
        if self.receipt_file is not None and self.file_ok and (stop is None or stop.receipt_file_ok):
            try:
                self.receipt_file.append({"record": "end", **self.header, **self.end_times(), **tail})
            except ReceiptWriteError as exc:
                stop = stop or Stopped(f"{exc} (the end line; every thread's line was written)", EXIT_STORE, False)
        return stop


class Recorder(RunRecord):
    def __init__(self, env: Environment, report: Report, *, header: dict[str, Any], kind: str, grace: timedelta,
                 receipt_file: ReceiptFile | None, total: int, stream: bool = False, keep: bool = False,
                 progress: bool = False) -> None:
        super().__init__(env, report, header=header, receipt_file=receipt_file, total=total, stream=stream,
                         progress=None if progress else False)
        self.kind, self.grace = kind, grace
        self.counts = dict.fromkeys(ep.STATUSES, 0)
        self.outcomes: list[ep.ThreadOutcome] | None = [] if keep else None
        self.failed = self.unverified = self.recent = 0

    def thread(self, result: ep.ThreadOutcome) -> Stopped | None:
        """One thread done: its receipt line is on disk before the next thread starts."""
        entry = ep.thread_entry(result, self.kind, self.grace)
        self.counts[result.status] += 1
        if self.outcomes is not None:
            self.outcomes.append(result)
        if result.status == ep.FAILED:
            self.failed += 1
            self.unverified += result.remaining is None
        self.recent += "warning" in entry
        return self._record(entry, result)

    def not_attempted(self, plans: list[ep.ThreadErasePlan], reason: str) -> None:
        """The threads left alone after a stop: in the kept outcomes (the final receipt), no line."""
        if self.outcomes is not None:
            self.outcomes += [ep.not_attempted(p, f"not attempted: {reason}") for p in plans]
