"""``symfonic thread prune``: old checkpoints removed with erase's safety.

Prepared first (a read-only store, a role without DELETE or UPDATE, ``--compact`` without room: exit 4
before anything is deleted); planned (threads, checkpoints, bytes, and the messages whose transcript
time moves); confirmed (the typed count, or ``--yes``); then one transaction per thread on one
snapshot, the rules decided again on it, the deletes compared with the plan and the kept state
compared before and after, before the commit (stores/_prune.py); a fresh plan verifies it (after
the commit; on PostgreSQL inside the transaction, where a difference rolls back). Each thread's
receipt line is on disk before the next starts; threads are read page by page; Ctrl-C stops between.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone
from typing import Any

from symfonic_cli import __version__
from symfonic_cli.environment import Environment
from symfonic_cli.changes.faults import Faults
from symfonic_cli.changes.jobs import check_jobs, close_sessions, open_sessions, run_jobs
from symfonic_cli.changes.records import RunRecord, default_operator, open_receipt, receipt_header, store_name
from symfonic_cli.changes.steps import DEFAULT_BATCH, Stopped, busy_error, check_replicas, hold_run_lock, run_threads
from symfonic_cli.changes.result import EraseOutcome
from symfonic_cli.changes.report import Confirmation, Report
from symfonic_cli.errors import EXIT_INTERRUPTED, NotFoundError, StoppedError, StoreError, SymfonicError, WrittenAgainError
from symfonic_cli.location import scrub
from symfonic_cli.model.prune import BUSY, FAILED, NOT_FOUND, NOTHING, SKIPPED
from symfonic_cli.selection import Selection
from symfonic_cli.prune import records as pr
from symfonic_cli.prune.params import PruneRequest

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from symfonic_cli.changes.jobs import Lane
    from symfonic_cli.stores.protocol import Store

SAMPLE = 10  # threads a plan of many shows


class _Keys:
    """The selected keys, a page at a time (explicit keys as given; a prefix, every thread or a
    retention window by keyset pagination in the store's key order)."""

    def __init__(self, store: Store, sel: Selection, batch: int) -> None:
        self.store, self.sel, self.batch = store, sel, batch
        w = sel.window
        self.window: dict[str, Any] = {}
        if sel.keys is None and (sel.every_thread or w is not None or sel.prefix is not None):
            self.window = {"tenant": sel.tenant, "sub_tenant": sel.sub_tenant,
                           "last_before": w.last_before if w is not None else None, "last_from": w.last_from if w is not None else None}
        self.total = len(sel.keys) if sel.keys is not None else store.window_count(**self.window)
        # A time window never selects a thread whose activity cannot be dated: counted apart.
        self.undatable = store.window_undatable(tenant=sel.tenant, sub_tenant=sel.sub_tenant) if w is not None else 0

    def pages(self):
        if self.sel.keys is not None:
            keys = list(self.sel.keys)
            for i in range(0, len(keys), self.batch):
                yield keys[i:i + self.batch]
            return
        after, n = None, 0
        while n < self.total:
            page = self.store.window_keys(**self.window, after=after, limit=min(self.batch, self.total - n))
            if not page:
                return
            n += len(page)
            after = page[-1]
            yield page


def check(req: PruneRequest) -> None:
    """What a request needs of its store's kind, checked before the store is opened (exit 2)."""
    check_replicas(req.pace, req.location)
    check_jobs(req.jobs, req.location)


def run(req: PruneRequest, environment: Environment | None = None, report: Report | None = None) -> EraseOutcome | None:
    """Deprecated: ``prune_threads`` on the store the API opens (api/front.py). Opens the store
    (writable unless a dry run) and prunes as ``prune_threads``."""
    from symfonic_cli.stores import open_store

    check(req)
    report = report or Report()
    store = open_store(req.location, writable=not req.dry_run, **req.options)
    report.opened(store.open_warnings)
    return prune_threads(store, req, environment, report,
                         open_session=lambda: open_store(req.location, writable=True, **req.options))


def prune_threads(store: Store, req: PruneRequest, environment: Environment | None = None,
                  report: Report | None = None, *, open_session: Callable[[], Store]) -> EraseOutcome | None:
    """Prune what ``req`` selects in ``store`` (opened writable unless a dry run; closed here),
    telling ``report`` (changes/report.py: the caller's; by default no one, and a needed
    confirmation raises) the plan, the confirmation, each thread and how the run ended (``ended``:
    an EraseOutcome when the report does not stream the record, told before the error that ends
    the run is raised). That EraseOutcome is returned too (None: a dry run, or the report streamed it).
    ``open_session``: how ``--jobs``' other sessions are opened, as ``store`` was."""
    env = environment or Environment()
    report = report or Report()
    now = datetime.now(timezone.utc)
    newer_than = now - req.older_than if req.older_than is not None else None
    name = store_name(req.location)
    rec = receipt_file = None
    stop: Stopped | None = None
    sessions: list = []
    try:
        try:
            receipt_file = open_receipt(req.receipt, dry_run=req.dry_run, store=req.location)  # checked before anything is deleted
            if not req.dry_run:  # first: the checks below take the write lock too
                store.set_lock_timeout(req.lock_timeout)
            notes = store.prune_prepare(dry_run=req.dry_run)  # exit 4 here, before any plan or delete
            if not req.dry_run:  # one run per store, held until the store is closed
                hold_run_lock(store, "prune", wait=req.wait, location=req.location, told=report.waiting)
            if req.jobs > 1 and not req.dry_run:  # a dry run reads in one session
                sessions = open_sessions(req.jobs, open_session, req.lock_timeout, lambda s: s.prune_prepare())
            if req.compact:
                notes += store.compact_check()
            keys = _Keys(store, req.selection, req.batch_size or DEFAULT_BATCH)
            plan = _Plan(store, req, keys, newer_than)
            if req.dry_run:
                plan.stream(report, name, notes)
                _check_missing(req, plan.missing, store)
                return None
            needs_confirm = not req.yes
            if needs_confirm or report.shows_plan:
                plan.count()  # the totals confirmed and shown (streamed: nothing kept per thread)
                view = plan.view(name, notes, whole=True)
                if needs_confirm:  # the caller's step: shows the plan, asks for the count (none: nothing to confirm)
                    report.confirm(Confirmation(view, "prune", plan.to_prune, from_stdin=req.selection.from_stdin))
                else:
                    report.plan(view)
            header = {
                **receipt_header(receipt_id=str(uuid.uuid4()), now=now, version=__version__, store=name,
                                    kind=req.location.kind, operator=req.operator or default_operator(), ticket=req.ticket,
                                    selection=req.selection.receipt, vacuum=req.compact),
                "operation": "prune", "keep": req.keep, "older_than": _seconds(req.older_than),
                "keep_branches": req.keep_branches,
            }
            rec = PruneRecorder(env, report, req, header, receipt_file, keys.total, store)
            rec.start(threads_planned=keys.total)
            faults = Faults.from_env(report)

            def plans_of(s: Store, page: list[str]) -> list:
                # The plans the deletes are compared with; the transcript times were the shown plan's.
                return s.prune_plans(page, keep=req.keep, newer_than=newer_than, keep_branches=req.keep_branches, times=False)

            if sessions:
                stop = run_jobs(keys.pages(), plans_of, lambda lane: _step(lane.store, req, newer_than, faults, rec.between(faults, lane)),
                                rec, faults, jobs=req.jobs, sessions=sessions, store=store, location=req.location,
                                max_duration=req.max_duration, pace=req.pace)
            else:
                step = _step(store, req, newer_than, faults, rec.between(faults))
                stop = run_threads((plans_of(store, p) for p in keys.pages()), step, rec, faults, location=req.location,
                                   max_duration=req.max_duration, pace=req.pace, replicas=store.replica_lag)
            compact = None
            if req.compact and stop is None:
                compact = _compact(store, req, notes)
        finally:
            close_sessions(sessions)
            store.close()
        tail: dict[str, Any] = {"summary": rec.summary(stop), "interrupted": bool(stop and stop.exit_code == EXIT_INTERRUPTED)}
        if stop is not None:
            tail["stopped"] = stop.reason
        if compact is not None:
            tail["compact"] = compact
        tail.update({"notes": notes, "timestamps": pr.TIMESTAMPS})
        stop = rec.end(tail, stop)
        if stop is not None:
            tail["stopped"] = stop.reason
        outcome = None  # as erase ends: the summary and the --receipt file, else the whole receipt (the caller's)
        if report.streams:
            report.end(tail)
        else:
            outcome = EraseOutcome({**header, **tail}, False, "prune", rec.kept_at(stop))
        report.flush()
    finally:
        if rec is not None and report.open:
            report.end({"summary": rec.summary(True), "stopped": "stopped by an unexpected error after the last thread"})
        if receipt_file is not None:
            receipt_file.close()
    if outcome is not None:
        report.ended(outcome)
    _raise_outcome(req, rec, stop, keys.total)
    return outcome


def _seconds(td: timedelta | None) -> int | None:
    return None if td is None else int(td.total_seconds())


class _Plan:
    """The plan, streamed: per-thread plans are computed, shown and counted, never all kept."""

    def __init__(self, store: Store, req: PruneRequest, keys: _Keys, newer_than) -> None:
        self.store, self.req, self.keys, self.newer_than = store, req, keys, newer_than
        self.to_prune = self.checkpoints = self.bytes = self.redated = self.lost = 0
        self.forked = self.heads_deleted = 0  # forked threads losing branch heads, and those heads
        self.sample: list[dict] = []
        self.missing: list[str] = []

    def records(self):
        from symfonic_cli.prune.lost import quick_reader

        # The plan's read of each thread also makes the lost-message count's quick pass (one read of the bytes).
        reader = quick_reader(self.store)
        for page in self.keys.pages():
            for p in self.store.prune_plans(page, keep=self.req.keep, newer_than=self.newer_than, keep_branches=self.req.keep_branches,
                                            reader=reader):
                found = p.checkpoints_before > 0 or self.req.selection.keys is None
                rec = pr.plan_record(p, found=found)
                if rec["status"] == "prune":
                    self.lost += _count_lost(self.store, rec, self.req, self.newer_than, p.decision, p.read)
                if not found:
                    self.missing.append(p.key)
                elif rec["status"] == "prune":
                    self.to_prune += 1
                    self.checkpoints += p.rows.get("checkpoints", 0)
                    self.bytes += p.bytes
                    self.redated += p.redated
                    if p.branch_heads_deleted:
                        self.forked += 1
                        self.heads_deleted += p.branch_heads_deleted
                yield rec

    def count(self) -> None:
        for rec in self.records():
            if len(self.sample) < SAMPLE:
                self.sample.append(rec)

    def totals(self) -> pr.PruneTotals:
        return pr.PruneTotals(self.to_prune, self.checkpoints, self.bytes, self.redated, self.lost, self.forked, self.heads_deleted)

    def view(self, store_name: str, notes: list[str], whole: bool = False) -> pr.PruneView:
        """The plan as the caller is told it; ``whole``: counted, with its first threads."""
        return pr.PruneView(store_name, self.req.keep, self.req.older_than, self.req.selection.receipt, self.keys.total,
                            self.keys.undatable, notes, list(self.sample), self.totals() if whole else None)

    def stream(self, report: Report, store_name: str, notes: list[str]) -> None:
        """A dry run: every thread's plan record to ``report`` as it is made, then the totals."""
        report.dry_run_begin(self.view(store_name, notes), {
            "dry_run": True, "store": store_name, "store_kind": self.req.location.kind, "selection": self.req.selection.receipt,
            "keep": self.req.keep, "older_than": _seconds(self.req.older_than), "keep_branches": self.req.keep_branches})
        n = 0
        try:
            for rec in self.records():
                n += 1
                report.planned(rec)
        finally:
            s = {"threads": n, "to_prune": self.to_prune, "checkpoints": self.checkpoints, "bytes": self.bytes,
                 "messages_redated": self.redated, "messages_only_in_deleted": self.lost, "not_found": len(self.missing),
                 "undatable": self.keys.undatable, "forked_threads": self.forked, "branch_heads_deleted": self.heads_deleted}
            report.dry_run_end(self.view(store_name, notes, whole=True), {"summary": s, "notes": notes, "timestamps": pr.TIMESTAMPS})
            report.flush()


def _step(store: Store, req: PruneRequest, newer_than, faults: Faults | None = None, between=None):
    """The per-thread step ``run_threads`` calls: classify the plan, prune (in pieces), verify."""
    from symfonic_cli.prune.pieces import prune_one

    def step(plan, n: int):
        now = datetime.now(timezone.utc)
        if plan.checkpoints_before == 0 and req.selection.keys is not None:
            return pr.PruneOutcome(plan.key, NOT_FOUND, time=now), None
        if plan.skipped:
            return pr.PruneOutcome(plan.key, SKIPPED, reason=plan.skipped, time=now), None
        if not plan.changes:
            return pr.PruneOutcome(plan.key, NOTHING, dict.fromkeys(plan.rows, 0), 0, 0, time=now), None
        return prune_one(store, plan, req, newer_than, faults.after_commit(n) if faults is not None else None, between)

    return step


class PruneRecorder(RunRecord):
    """erase's record of a run (``RunRecord``: receipt lines, a reader's line per thread, the JSON
    stream, progress) for prune outcomes, the interface ``run_threads`` drives."""

    verb = "pruned"

    def __init__(self, env: Environment, report: Report, req: PruneRequest, header, receipt_file, total: int, store: Store) -> None:
        super().__init__(env, report, header=header, receipt_file=receipt_file, total=total, stream=True, progress=None)
        self.req, self.store = req, store
        self.counts = pr.empty_counts()
        self.rows: dict[str, int] = {}
        self.missing: list[str] = []
        self.missing_message = ""
        self.written_again = 0  # failed threads whose prune committed (verification found more to prune)

    def thread(self, result: pr.PruneOutcome) -> Stopped | None:
        entry = pr.thread_entry(result, self.req.location.kind)
        self.counts[result.status] += 1
        self.written_again += result.status == FAILED and bool(result.remaining)
        for t, n in result.rows_deleted.items():
            self.rows[t] = self.rows.get(t, 0) + n
        if result.status == NOT_FOUND:
            self.missing.append(result.key)
            if len(self.missing) == 1:  # the error line names near misses; the receipt does not
                from symfonic_cli.suggestions import Suggester, not_found_message

                self.missing_message = not_found_message(result.key, self.req.location.display, Suggester(self.store))
        return self._record(entry, result)

    def between(self, faults: Faults, lane: Lane | None = None):
        """What runs between two pieces of a huge thread: the piece's receipt line (on disk before
        the next piece), the tests' fault hook, the pace's pause, the wait for lagging replicas.
        With ``lane`` (--jobs): the session's own replicas' reads, the line written by the recording thread."""
        import time

        from symfonic_cli.changes.receipt_file import ReceiptWriteError
        from symfonic_cli.changes.steps import wait_for_replicas

        limit = self.req.max_duration
        deadline = time.monotonic() + limit.total_seconds() if limit is not None else None

        def piece_line(key: str, n: int, deleted: dict[str, int], detached: int, left: int) -> None:
            from symfonic_cli.clock import iso_utc

            if self.receipt_file is not None and self.file_ok:
                entry = {"key": key, "piece": n, "time": iso_utc(datetime.now(timezone.utc)), "rows_deleted": deleted,
                         "parents_detached": detached, "checkpoints_left": left}
                try:
                    self.receipt_file.append({"record": "piece", **self.header, **entry})
                except ReceiptWriteError as exc:
                    raise StoreError(f"{exc}; stopped between two pieces") from None
            faults.after_piece(n)

        def between(key: str, n: int, deleted: dict[str, int], detached: int, left: int) -> None:
            if lane is None:
                piece_line(key, n, deleted, detached, left)
            else:
                lane.in_main(lambda: piece_line(key, n, deleted, detached, left))
            pace = self.req.pace
            if pace is not None and pace.pause:
                time.sleep(pace.pause)
            if pace is not None and pace.max_replica_lag is not None:  # up to the time limit: the run stops between threads
                store, progress = (self.store, self.progress) if lane is None else (lane.store, lane.progress)
                wait_for_replicas(store.replica_lag, pace.max_replica_lag, None, deadline, progress)

        return between

    def summary(self, stop) -> dict[str, Any]:
        return pr.summary(self.counts, self.total, self.done, stop is not None, self.rows)


def _compact(store: Store, req: PruneRequest, notes: list[str]) -> dict[str, Any]:
    """After the last thread: the space given back; a failure is a note (the prunes are committed)."""
    try:
        before, after, more = store.compact()
    except SymfonicError as exc:
        notes.append(f"--compact failed: {scrub(exc.line(), req.location)}")
        return {"done": False}
    notes += more
    return {"done": True, "bytes_before": before, "bytes_after": after}


def _check_missing(req: PruneRequest, missing: list[str], store: Store) -> None:
    if req.missing_ok or not missing:
        return
    from symfonic_cli.suggestions import Suggester, not_found_message

    where = req.location.display
    if len(missing) == 1:
        raise NotFoundError(not_found_message(missing[0], where, Suggester(store)))
    listed = ", ".join(f"'{k}'" for k in missing[:5]) + (", ..." if len(missing) > 5 else "")
    raise NotFoundError(f"{len(missing)} requested threads not found in {where}: {listed} (--missing-ok to accept)")


def _raise_outcome(req: PruneRequest, rec: PruneRecorder, stop: Stopped | None, total: int) -> None:
    if stop is not None:
        s = rec.summary(stop)
        raise StoppedError(f"{stop.reason}; {s['threads']} of {total} thread(s) done, {s['pruned']} pruned", stop.exit_code)
    if rec.counts[FAILED]:
        again = rec.written_again
        left = rec.counts[FAILED] - again
        committed = f"{again} thread(s) pruned and committed, then written again by an application: stop it and prune again"
        if left:
            raise StoreError(f"{left} thread(s) failed and were left as they were" + (f"; {committed}" if again else "") + " (see the receipt)")
        raise WrittenAgainError(f"{committed} (see the receipt)")
    if rec.counts[BUSY]:
        raise busy_error(rec.counts[BUSY], "pruned")
    if len(rec.missing) == 1 and not req.missing_ok:
        raise NotFoundError(rec.missing_message)
    if rec.missing and not req.missing_ok:
        listed = ", ".join(f"'{k}'" for k in rec.missing[:5]) + (", ..." if len(rec.missing) > 5 else "")
        raise NotFoundError(f"{len(rec.missing)} requested thread(s) not found in {req.location.display}: {listed}",
                            hint="--missing-ok to accept")
    if req.selection.keys is None and total == 0 and not req.missing_ok:
        raise NotFoundError(f"no thread matches the selection in {req.location.display}", hint="--missing-ok to accept")


def _count_lost(store, rec: dict[str, Any], req: PruneRequest, newer_than, decision=None, views=None) -> int:
    from symfonic_cli.prune.pieces import lost_by

    rec["messages_only_in_deleted"] = n = lost_by(store, rec["key"], req, newer_than, decision, views)
    return n
