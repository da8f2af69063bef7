"""``thread erase`` for requested keys or a tenant prefix: the request driver over a changing
run's parts (changes/: plan.py: plans and the receipt; steps.py: the per-thread step and the loop; records.py:
the receipt file; report.py: what the caller is told, its typed events; faults.py). A retention
sweep (a selection with a window) is sweep.py's, the other driver (api/front.py picks it). It writes no text:
the caller's Report renders (the command line: cli/report.py) or keeps (the Python API) it.

The plans are made, and told to the caller (shown, or confirmed by its step), first; every requested key with nothing to erase is classified
(not-found with suggestions, or already-erased by a receipt of the same store); after the typed
confirmation each thread is erased in its own transaction and recorded before the next one.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from symfonic_cli.environment import Environment
from symfonic_cli.changes import plan as ep
from symfonic_cli.changes.faults import Faults
from symfonic_cli.changes.jobs import check_jobs
from symfonic_cli.erase.params import EraseRequest
from symfonic_cli.changes.report import Report, RequestView
from symfonic_cli.changes.result import EraseOutcome
from symfonic_cli.changes.records import Recorder, default_operator, new_header, open_receipt, store_name
from symfonic_cli.changes.steps import Stopped, busy_error, check_replicas, erase_step, finish, hold_run_lock, run_threads
from symfonic_cli.errors import (
    EXIT_STORE,
    EXIT_WRITTEN_AGAIN,
    EraseIncomplete,
    NotFoundError,
    StoppedError,
)

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.stores.protocol import Store

__all__ = ["EraseOutcome", "EraseRequest", "run", "default_operator", "store_name"]


def check(req: EraseRequest) -> None:
    """What a request needs of its store's kind and config entry, checked before the store is opened (exit 2)."""
    check_replicas(req.pace, req.location)
    check_jobs(req.jobs, req.location, sweep=req.selection.window is not None)
    req.extra  # noqa: B018 -- read now: the erase_extra tables validated (exit 2) before the store is opened


def run(req: EraseRequest, environment: Environment | None = None, report: Report | None = None) -> EraseOutcome | None:
    """Deprecated: ``erase_threads`` on the store the API opens (api/front.py). Opens the store
    (writable unless a dry run) and erases as ``erase_threads``."""
    from symfonic_cli.stores import open_store

    check(req)
    report = report or Report()
    store = open_store(req.location, writable=not req.dry_run, **req.options)
    report.opened(store.open_warnings)
    if req.selection.window is not None:
        from symfonic_cli.erase.sweep import run_sweep

        return run_sweep(store, req, environment or Environment(), report,
                         open_session=lambda: open_store(req.location, writable=True, **req.options))
    return erase_threads(store, req, environment, report)


def erase_threads(store: Store, req: EraseRequest, environment: Environment | None = None,
                  report: Report | None = None) -> EraseOutcome | None:
    """Erase what ``req`` selects in ``store`` (opened writable unless a dry run, its warnings
    told by the opener; closed here), telling ``report`` (changes/report.py: the caller's; by
    default no one, and a needed confirmation raises) the plan, the confirmation, each thread and
    how the run ended (``ended``: its EraseOutcome, a dry run's plan or the receipt), which is
    returned too; a run that does not end cleanly then raises (a SymfonicError with its exit
    code). A retention sweep (a selection with a time window) is the other driver's:
    erase/sweep.run_sweep."""
    if req.selection.window is not None:
        raise ValueError("a selection with a time window is a retention sweep: erase/sweep.run_sweep")
    env = environment or Environment()
    report = report or Report()
    extra = req.extra
    now = datetime.now(timezone.utc)
    name = store_name(req.location)
    receipt_file = None
    stop: Stopped | None = None
    try:
        try:
            receipt_file = open_receipt(req.receipt, dry_run=req.dry_run, store=req.location)
            # A dry run makes the real run's checks too (and exits as it would), changing nothing.
            if not req.dry_run:  # first: the checks below take the write lock too
                store.set_lock_timeout(req.lock_timeout)
            notes = store.erase_prepare(extra, dry_run=req.dry_run)
            if not req.dry_run:  # one run per store, held until the store is closed
                hold_run_lock(store, "erase", wait=req.wait, location=req.location, told=report.waiting)
            sel = req.selection
            keys = list(sel.keys) if sel.keys is not None else store.thread_keys_with_prefix(sel.prefix or "")
            plans = _with_retained(store, store.erase_plans(keys, extra))
            identity = store.store_identity()
            suggester, misses = _misses(store, plans, req, receipt_file, identity)
            missing = sum(1 for m in misses.values() if m.status == ep.NOT_FOUND)
            if missing and (req.missing_ok or missing > 1):  # one alone: the closing error says it
                report.misses(misses)
            needs_confirm = not req.dry_run and not req.yes and bool(ep.to_erase(plans))
            huge = _huge_note(plans)
            notes += huge
            view = RequestView(name, plans, misses, now, req.grace, by_prefix=sel.keys is None, extra=extra, notes=huge)
            if needs_confirm:  # the caller's step: shows the plan where the answer is read, and asks
                report.confirm(view.confirmation(from_stdin=sel.from_stdin))
            else:
                report.plan(view)
            if req.dry_run:
                report.flush()
                planned = EraseOutcome(ep.plan_document(store_name=name, kind=req.location.kind, selection=sel.receipt,
                                                        plans=plans, misses=misses, now=now, grace=req.grace), True)
                report.ended(planned)  # a dry run exits as the real run would, its plan told first
                _check_outcome(req, [], plans, misses, suggester, None)
                return planned
            header = new_header(req.location, store, now, operator=req.operator, ticket=req.ticket,
                                selection=sel.receipt, vacuum=req.vacuum)
            recorder = Recorder(env, report, header=header, kind=req.location.kind, grace=req.grace,
                                receipt_file=receipt_file, total=len(plans), keep=True)
            recorder.start(threads_planned=len(plans))
            faults = Faults.from_env(report)

            def step(plan: ep.ThreadErasePlan, n: int) -> tuple[ep.ThreadOutcome, Stopped | None]:
                miss = misses.get(plan.key)
                if miss is not None:
                    return ep.missed(plan, miss), None
                return erase_step(store, plan, extra, now=now, grace=req.grace,
                                  between=faults.between(n, plan.rows))

            stop = run_threads([plans], step, recorder, faults, location=req.location, max_duration=req.max_duration, pace=req.pace,
                               replicas=store.replica_lag)
            if stop is not None:
                recorder.not_attempted(plans[recorder.done:], stop.reason)
            stop = finish(lambda: store.erase_finish(vacuum=req.vacuum), req.location, notes, stop,
                          wait=req.wait, told=report.waiting, erased=recorder.counts[ep.ERASED] + recorder.counts[ep.FAILED] > 0)
        finally:
            store.close()
        outcomes = recorder.outcomes
        assert outcomes is not None  # Recorder(keep=True)
        receipt = ep.build_receipt(header, outcomes, kind=req.location.kind, notes=notes, grace=req.grace)
        end: dict[str, Any] = {"summary": receipt["summary"], "notes": notes, "not_erased": ep.NOT_ERASED}
        if stop is not None:  # the end record says why the run stopped (Ctrl-C, the time limit)
            end["stopped"] = stop.reason
        stop = recorder.end(end, stop)
        if stop is not None:
            receipt["stopped"] = stop.reason
        outcome = EraseOutcome(receipt, False, "erase", recorder.kept_at(stop))
        report.flush()
    finally:
        if receipt_file is not None:
            receipt_file.close()
    report.ended(outcome)  # the receipt, told before the error that ends the run
    _check_outcome(req, outcomes, plans, misses, suggester, stop)
    return outcome


def _with_retained(store: Store, plans: list[ep.ThreadErasePlan]) -> list[ep.ThreadErasePlan]:
    """Each plan with the messages only older checkpoints still hold (issue 36's retained: compaction
    removed them from the conversation), which the erase deletes too: the plan says what goes.
    Each checkpoint of a thread is read once, streaming (the store's ``message_views``: stores/messages.py)."""
    from dataclasses import replace

    from symfonic_cli.memory.retained import retained_count

    return [replace(p, retained=retained_count(store, p.key)) if p.rows.get("checkpoints") else p for p in plans]


def _misses(store: Store, plans, req: EraseRequest, receipt_file, identity: dict[str, Any]):
    """For each requested key with no row anywhere in the cascade: not-found (with suggestions)
    or, when the --receipt file records it erased from the same tables, already-erased."""
    from symfonic_cli.suggestions import Suggester

    suggester = Suggester(store)
    if req.selection.keys is None:  # a prefix selection lists only keys that have rows
        return suggester, {}
    empty = [p for p in plans if not p.total]
    misses: dict[str, ep.Miss] = {}
    previous = receipt_file.previous_erasures(identity, [p.key for p in empty]) if receipt_file is not None and empty else {}
    for p in empty:
        earlier = previous.get(p.key)
        if earlier is not None:
            misses[p.key] = ep.Miss(ep.ALREADY_ERASED, erased_by={"receipt_id": earlier[0], "time": earlier[1]})
        else:
            misses[p.key] = ep.Miss(ep.NOT_FOUND, suggestions=suggester.suggest(p.key))
    return suggester, misses


def _check_outcome(req: EraseRequest, outcomes, plans, misses, suggester, stop: Stopped | None) -> None:
    """Raise the error that ends the run (stopped, a thread failed, a requested thread missing)."""
    from symfonic_cli.suggestions import not_found_message

    if stop is not None:
        erased = [o.key for o in outcomes if o.status == ep.ERASED]
        listed = ", ".join(f"'{k}'" for k in erased) or "none"
        if any(o.status == ep.NOT_ATTEMPTED for o in outcomes):
            raise StoppedError(f"{stop.reason}; stopped before the next thread; erased {len(erased)} thread(s): {listed}", stop.exit_code)
        raise StoppedError(f"{stop.reason}; erased {len(erased)} thread(s): {listed}", stop.exit_code)
    failures = [o for o in outcomes if o.status == ep.FAILED]
    if failures:
        raise EraseIncomplete(EXIT_STORE if any(o.remaining is None for o in failures) else EXIT_WRITTEN_AGAIN)
    busy = sum(1 for o in outcomes if o.status == ep.BUSY)
    if busy:
        raise busy_error(busy, "erased")
    if req.missing_ok:
        return
    where = req.location.display
    missing = [k for k, m in misses.items() if m.status == ep.NOT_FOUND]
    if len(missing) == 1:
        raise NotFoundError(not_found_message(missing[0], where, suggester))
    if missing:
        listed = ", ".join(f"'{k}'" for k in missing[:5]) + (", ..." if len(missing) > 5 else "")
        raise NotFoundError(f"{len(missing)} requested threads not found in {where}: {listed} (suggestions above; --missing-ok to accept)")
    if req.selection.keys is None and not plans:
        raise NotFoundError(f"no thread matches the prefix '{req.selection.prefix}' in {where}", hint="--missing-ok to accept")


def _huge_note(plans: list[ep.ThreadErasePlan]) -> list[str]:
    """Threads past prune's piece bound are still erased in one transaction each: said in the plan."""
    from symfonic_cli.limits import DEFAULT_PIECE

    huge = sum(1 for p in plans if p.rows and list(p.rows.values())[-1] > DEFAULT_PIECE)  # the checkpoint table comes last
    if not huge:
        return []
    return [f"{huge} thread(s) hold more than {DEFAULT_PIECE} checkpoints: each is still erased in ONE transaction "
            "(an erasure is all or nothing), its rows locked until it commits"]
