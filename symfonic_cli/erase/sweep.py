"""Retention sweeps (``thread erase --inactive-for/--inactive-since``), streamed batch by batch.

Memory does not grow with the number of threads: the database counts the idle threads, then
hands them out a page at a time (keyset pagination by key, ``window_keys``) with the cut-off
fixed once; each page is planned, erased thread by thread (one transaction each, the last
activity re-checked inside it) and recorded before the next page is read. Nothing per thread is
kept: the receipt file, the caller's Report (changes/report.py) and the progress line get each
thread as it happens, the counts are the only state. Ctrl-C stops after the thread in flight (its transaction ends normally), the
``end`` record says so, exit 130; the same command run again erases the rest, because erased
threads are no longer selected.

The sweep driver over a changing run's parts (changes/: steps.py, records.py, report.py, faults.py): it supplies
the pages of plans and the erase step with the in-transaction activity re-check; it writes no text.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from symfonic_cli.environment import Environment
from symfonic_cli.changes import plan as ep
from symfonic_cli.changes.faults import Faults
from symfonic_cli.changes.jobs import close_sessions, open_sessions, run_jobs
from symfonic_cli.changes.report import Confirmation, Report, SweepView
from symfonic_cli.changes.records import Recorder, new_header, open_receipt, store_name
from symfonic_cli.changes.result import EraseOutcome
from symfonic_cli.changes.steps import DEFAULT_BATCH, busy_error, erase_step, finish, hold_run_lock, run_threads
from symfonic_cli.errors import EXIT_INTERRUPTED, EXIT_STORE, EXIT_WRITTEN_AGAIN, EraseIncomplete, StoppedError

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from symfonic_cli.stores.protocol import Store

SAMPLE = 10  # keys the confirmation shows


def run_sweep(store: Store, req, env: Environment, report: Report, *,
              open_session: Callable[[], Store]) -> EraseOutcome | None:
    """Erase the threads idle since the selection's cut-off, batch by batch; raises the error that
    ends the run (stopped, a thread failed, not confirmed) after the receipt is written. A dry run,
    and a run whose report streams, are told as they go (None); else the run's end is told
    (``ended``, before the error) and returned. ``store``: opened writable
    unless a dry run; closed here. ``open_session``: how ``--jobs``' other sessions are opened, as
    ``store`` was."""
    extra = req.extra
    now = datetime.now(timezone.utc)
    name = store_name(req.location)
    sel = req.selection
    outcome = None
    window = {"tenant": sel.tenant, "sub_tenant": sel.sub_tenant, "last_before": sel.window.last_before, "last_from": sel.window.last_from}
    batch = req.batch_size or DEFAULT_BATCH
    receipt_file = recorder = None
    sessions: list = []
    try:
        try:
            receipt_file = open_receipt(req.receipt, dry_run=req.dry_run, store=req.location)
            if not req.dry_run:  # first: the checks below take the write lock too
                store.set_lock_timeout(req.lock_timeout)
            notes = store.erase_prepare(extra, dry_run=req.dry_run)
            if not req.dry_run:  # one run per store, held until the store is closed
                hold_run_lock(store, "erase", wait=req.wait, location=req.location, told=report.waiting)
                if req.jobs > 1:
                    sessions = open_sessions(req.jobs, open_session, req.lock_timeout, lambda s: s.erase_prepare(extra))
            total = store.window_count(**window)  # counted in the database
            # Threads no time window can judge: never selected, counted apart in the plan.
            undatable = store.window_undatable(tenant=sel.tenant, sub_tenant=sel.sub_tenant)
            if req.dry_run:
                _dry_run(store, req, report, window, SweepView(name, sel.receipt, total, batch, now, req.grace, undatable), extra)
                return None
            needs_confirm = not req.yes and total > 0
            # The first batch is selected and planned before the confirmation: a thread of it that
            # an agent writes while the operator reads is then reported skipped-active.
            first = store.erase_plans(store.window_keys(**window, limit=min(batch, total)), extra) if total else []
            view = SweepView(name, sel.receipt, total, batch, now, req.grace, undatable, first[:SAMPLE])
            if needs_confirm:  # the caller's step: shows the plan where the answer is read, and asks
                report.confirm(Confirmation(view, "erase", total, from_stdin=sel.from_stdin))
            else:
                report.plan(view)
            header = new_header(req.location, store, now, operator=req.operator, ticket=req.ticket,
                                selection=sel.receipt, vacuum=req.vacuum)
            recorder = Recorder(env, report, header=header, kind=req.location.kind, grace=req.grace,
                                receipt_file=receipt_file, total=total, stream=True, progress=True)
            recorder.start(threads_planned=total, batch_size=batch, threads_undatable=undatable)
            faults = Faults.from_env(report)
            idle_before = sel.window.last_before  # re-checked inside each thread's transaction

            def step_on(s: Store):
                def step(plan: ep.ThreadErasePlan, n: int):
                    return erase_step(s, plan, extra, now=now, grace=req.grace,
                                      between=faults.between(n, plan.rows), idle_before=idle_before)
                return step

            if sessions:  # each session plans the keys it takes; the first page is planned already
                stop = run_jobs(_pages(store, window, extra, first, batch, total, planned=False),
                                lambda s, page: page if not isinstance(page[0], str) else s.erase_plans(page, extra),
                                lambda lane: step_on(lane.store), recorder, faults, jobs=req.jobs, sessions=sessions, store=store,
                                location=req.location, max_duration=req.max_duration, pace=req.pace)
            else:
                stop = run_threads(_pages(store, window, extra, first, batch, total), step_on(store), recorder, faults,
                                   location=req.location, max_duration=req.max_duration, pace=req.pace,
                                   replicas=store.replica_lag)
            stop = finish(lambda: store.erase_finish(vacuum=req.vacuum), req.location, notes, stop,
                          wait=req.wait, told=report.waiting, erased=recorder.counts[ep.ERASED] + recorder.counts[ep.FAILED] > 0)
        finally:
            close_sessions(sessions)
            store.close()
        summary = {**_summary(recorder, stop), "undatable": undatable}
        tail: dict[str, Any] = {"summary": summary, "interrupted": bool(stop and stop.exit_code == EXIT_INTERRUPTED)}
        if stop is not None:
            tail["stopped"] = stop.reason
        tail.update({"notes": notes, "not_erased": ep.NOT_ERASED})
        ended = recorder.end(tail, stop)
        if ended is not None and ended is not stop:
            stop = ended
            tail["stopped"] = stop.reason
        if report.streams:
            report.end(tail, recorder.end_times())
        else:
            outcome = EraseOutcome({**header, **tail}, False, "sweep", recorder.kept_at(stop), recorder.recent)
        report.flush()
    finally:
        if recorder is not None and report.open:
            # An error after the threads: the streamed record is still closed, and says so.
            report.end({"summary": _summary(recorder, True), "stopped": "stopped by an unexpected error after the last thread"})
        if receipt_file is not None:
            receipt_file.close()
    if outcome is not None:
        report.ended(outcome)
    _check(stop, recorder, summary, total)
    return outcome


def _check(stop, recorder: Recorder, summary: dict[str, int], total: int) -> None:
    """The error that ends the run: stopped, a thread failed, threads busy."""
    if stop is not None:
        raise StoppedError(
            f"{stop.reason}; {summary['threads']} of {total} thread(s) done, {summary['erased']} erased", stop.exit_code)
    if recorder.failed:
        raise EraseIncomplete(EXIT_STORE if recorder.unverified else EXIT_WRITTEN_AGAIN)
    if summary["busy"]:
        raise busy_error(summary["busy"], "erased")


def _pages(store: Store, window, extra, first: list, batch: int, total: int, planned: bool = True):
    """The first page, then the next ones by key (keyset pagination), never more than counted
    and confirmed (a thread cannot become idle after a cut-off fixed in the past, but a restored
    backup could add old ones). Not ``planned``: the next pages as keys, for the sessions to plan."""
    page: list = first
    done = 0
    while page:
        yield page
        done += len(page)
        if done >= total or len(page) < batch:
            return
        last = page[-1] if isinstance(page[-1], str) else page[-1].key
        keys = store.window_keys(**window, after=last, limit=min(batch, total - done))
        page = store.erase_plans(keys, extra) if planned else keys


def _summary(recorder: Recorder, stop) -> dict[str, int]:
    c = recorder.counts
    return {
        "planned": recorder.total,
        "threads": recorder.done,
        "erased": c[ep.ERASED],
        "nothing_to_erase": c[ep.NOTHING],
        "failed": c[ep.FAILED],
        "not_found": 0,
        "already_erased": 0,
        "not_attempted": recorder.total - recorder.done if stop is not None else 0,
        "skipped_active": c[ep.SKIPPED_ACTIVE],
        "busy": c[ep.BUSY],
    }


def _dry_run(store: Store, req, report: Report, window, view: SweepView, extra) -> None:
    """The plan of every idle thread, told page by page; nothing deleted."""
    report.dry_run_begin(view, {"dry_run": True, "store": view.store_name, "store_kind": req.location.kind,
                                "selection": view.selection, "batch_size": view.batch})
    after, n, rows = None, 0, 0
    try:
        while n < view.total:
            keys = store.window_keys(**window, after=after, limit=min(view.batch, view.total - n))
            if not keys:
                break
            after = keys[-1]
            for record in ep.plan_records(store.erase_plans(keys, extra), view.now, view.grace):
                n += 1
                rows += record["total"]
                report.planned(record)
    finally:
        summary = {"threads": n, "to_erase": n, "rows": rows, "not_found": 0, "already_erased": 0, "nothing_to_erase": 0,
                   "undatable": view.undatable}
        report.dry_run_end(view, {"summary": summary, "not_erased": ep.NOT_ERASED})
        report.flush()
