"""Retention sweeps (``thread erase --inactive-for/--inactive-since``), streamed batch by batch.

Memory does not grow with the number of threads: the database counts the idle threads, then
hands them out a page at a time (keyset pagination by key, ``window_keys``) with the cut-off
fixed once; each page is planned, erased thread by thread (one transaction each, the last
activity re-checked inside it) and recorded before the next page is read. Nothing per thread is
kept: the receipt file, stdout and the progress line get each thread as it happens, the counts
are the only state. Ctrl-C stops after the thread in flight (its transaction ends normally), the
``end`` record says so, exit 130; the same command run again erases the rest, because erased
threads are no longer selected.

The sweep driver over the erase parts (steps.py, confirm.py, records.py, text.py, faults.py):
it supplies the pages of plans and the erase step with the in-transaction activity re-check.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from symfonic_cli.environment import Environment
from symfonic_cli.erase import plan as ep
from symfonic_cli.erase import text
from symfonic_cli.erase.confirm import confirm_count
from symfonic_cli.erase.faults import Faults
from symfonic_cli.erase.records import Recorder, new_header, open_receipt, store_name
from symfonic_cli.erase.result import EraseOutcome, carry_outcome
from symfonic_cli.erase.steps import DEFAULT_BATCH, busy_error, erase_step, finish, hold_run_lock, run_threads
from symfonic_cli.errors import EXIT_INTERRUPTED, EXIT_STORE, EXIT_WRITTEN_AGAIN, EraseIncomplete, StoppedError

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.stores.protocol import Store

SAMPLE = 10  # keys the confirmation shows


def run_sweep(req, env: Environment) -> EraseOutcome | None:
    """Erase the threads idle since the selection's cut-off, batch by batch; raises the error that
    ends the run (stopped, a thread failed, not confirmed) after the receipt is written. JSON and a
    dry run are streamed as they go (None); a reader's end is returned, for the caller to render
    (an error carries it as ``.outcome``)."""
    from symfonic_cli.stores import open_store

    out = env.stdout
    human = req.fmt not in ("json", "jsonl")
    extra = ep.parse_extra(req.location.options)
    now = datetime.now(timezone.utc)
    name = store_name(req.location)
    sel = req.selection
    outcome = None
    window = {"tenant": sel.tenant, "sub_tenant": sel.sub_tenant, "last_before": sel.window.last_before, "last_from": sel.window.last_from}
    batch = req.batch_size or DEFAULT_BATCH
    receipt_file = open_receipt(req.receipt_path, dry_run=req.dry_run, store=req.location)
    terminal = None
    recorder = None
    try:
        store = open_store(req.location, writable=not req.dry_run, stderr=env.stderr, **req.options)
        try:
            if not req.dry_run:  # first: the checks below take the write lock too
                store.set_lock_timeout(req.lock_timeout)
            notes = store.erase_prepare(extra, dry_run=req.dry_run)
            if not req.dry_run:  # one run per store, held until the store is closed
                hold_run_lock(store, "erase", wait=req.wait, location=req.location, stderr=env.stderr)
            total = store.window_count(**window)  # counted in the database
            # Threads no time window can judge: never selected, counted apart in the plan.
            undatable = store.window_undatable(tenant=sel.tenant, sub_tenant=sel.sub_tenant)
            if req.dry_run:
                _dry_run(store, req, env, window, total, batch, name, extra, now, undatable)
                return None
            needs_confirm = not req.yes and total > 0
            if needs_confirm:
                terminal = req.ask(env, from_stdin=sel.from_stdin)
            # The first batch is selected and planned before the confirmation: a thread of it that
            # an agent writes while the operator reads is then reported skipped-active.
            first = store.erase_plans(store.window_keys(**window, limit=min(batch, total)), extra) if total else []
            plan_out = terminal.writer if terminal is not None else (out if human else None)
            if plan_out is not None:
                text.print_sweep_plan(plan_out, store_name=name, selection=sel.receipt, total=total,
                                      batch=batch, sample=first[:SAMPLE], now=now, grace=req.grace, env=env,
                                      undatable=undatable)
            if needs_confirm:
                confirm_count(terminal, total)
            header = new_header(req.location, store, now, operator=req.operator, ticket=req.ticket,
                                selection=sel.receipt, vacuum=req.vacuum)
            recorder = Recorder(env, fmt=req.fmt, header=header, kind=req.location.kind, grace=req.grace,
                                receipt_file=receipt_file, total=total, stream=True, progress=True)
            recorder.start(threads_planned=total, batch_size=batch, threads_undatable=undatable)
            faults = Faults.from_env(out)
            idle_before = sel.window.last_before  # re-checked inside each thread's transaction

            def step(plan: ep.ThreadErasePlan, n: int):
                return erase_step(store, plan, extra, location=req.location, now=now, grace=req.grace,
                                  between=faults.between(n, plan.rows), idle_before=idle_before)

            stop = run_threads(_pages(store, window, extra, first, batch, total), step, recorder, faults, location=req.location,
                               max_duration=req.max_duration, pace=req.pace,
                               replicas=store.replica_lag)
            stop = finish(lambda: store.erase_finish(vacuum=req.vacuum), req.location, notes, stop)
        finally:
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
        if human:
            line = ep.summary_line({"summary": summary, "threads": []})
            if undatable:
                line += f"; {undatable} thread(s) left alone: their activity cannot be dated"
            if recorder.recent:
                line += f"; warning: {recorder.recent} thread(s) had recent activity, a running agent may write them again"
            outcome = EraseOutcome({**header, **tail}, False, line, recorder.kept_at(stop))
        elif recorder.stream is not None:
            recorder.stream.end(tail, recorder.end_times())
        out.flush()
    finally:
        if recorder is not None and recorder.stream is not None and recorder.stream.open:
            # An error after the threads: the document on stdout is still closed, and says so.
            recorder.stream.end({"summary": _summary(recorder, True), "stopped": "stopped by an unexpected error after the last thread"})
        if receipt_file is not None:
            receipt_file.close()
        if terminal is not None:
            terminal.close()
    carry_outcome(outcome, lambda: _check(stop, recorder, summary, total))
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


def _pages(store: Store, window, extra, first: list, batch: int, total: int):
    """The first page, then the next ones by key (keyset pagination), never more than counted
    and confirmed (a thread cannot become idle after a cut-off fixed in the past, but a restored
    backup could add old ones)."""
    plans, done = first, 0
    while plans:
        yield plans
        done += len(plans)
        if done >= total or len(plans) < batch:
            return
        keys = store.window_keys(**window, after=plans[-1].key, limit=min(batch, total - done))
        plans = store.erase_plans(keys, extra)


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


def _dry_run(store: Store, req, env: Environment, window, total, batch, name, extra, now, undatable: int = 0) -> None:
    """The plan of every idle thread, streamed page by page; nothing deleted."""
    out = env.stdout
    human = req.fmt not in ("json", "jsonl")
    stream = text.document_stream(env, req.fmt, record="plan")
    if human:
        text.sweep_dry_run_head(out, name, req.selection.receipt, total, batch, env, undatable)
    else:
        stream.begin({"dry_run": True, "store": name, "store_kind": req.location.kind, "selection": req.selection.receipt, "batch_size": batch})
    after, n, rows = None, 0, 0
    width = text.width_of(out) if human else None
    try:
        while n < total:
            keys = store.window_keys(**window, after=after, limit=min(batch, total - n))
            if not keys:
                break
            after = keys[-1]
            for record in ep.plan_records(store.erase_plans(keys, extra), now, req.grace):
                n += 1
                rows += record["total"]
                if human:
                    out.write(text.plan_line(record, req.grace, env, width=width) + "\n")
                else:
                    stream.item(record)
    finally:
        summary = {"threads": n, "to_erase": n, "rows": rows, "not_found": 0, "already_erased": 0, "nothing_to_erase": 0,
                   "undatable": undatable}
        if human:
            text.write_fitted(out, [ep.NOT_ERASED], hang="  ")
            out.write("dry run: nothing deleted\n")
        else:
            stream.end({"summary": summary, "not_erased": ep.NOT_ERASED})
        out.flush()
