"""``thread rewind``'s driver: plan (rewind/plan.py), confirmation, one transaction, verification and
receipt, on the changing runs' parts (changes/: the run lock, the Report's events, the receipt file,
the fault hooks). It writes no text: the caller's Report is told the plan (a RewindView), the
confirmation and the thread (a ThreadDone holding a RewindOutcome); the run returns its
EraseOutcome (the receipt, or the dry run's plan), and an error that ends it carries that outcome."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from symfonic_cli.environment import Environment
from symfonic_cli.changes.faults import Faults
from symfonic_cli.changes.records import RunRecord, new_header, open_receipt, store_name
from symfonic_cli.changes.report import Confirmation, Report
from symfonic_cli.changes.result import EraseOutcome
from symfonic_cli.changes.steps import hold_run_lock
from symfonic_cli.errors import BusyThreads, HeadMoved, RecentlyWritten, ThreadBusy, WrittenAgainError
from symfonic_cli.rewind import plan as rp
from symfonic_cli.rewind.params import RewindRequest

# typing.TYPE_CHECKING without importing typing's names at run time.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.stores.protocol import Store


@dataclass(frozen=True)
class RewindOutcome:
    """The thread's end, as its line says it."""

    key: str
    status: str  # plan.REWOUND, WRITTEN_AGAIN, NOT_WRITTEN
    target: str
    head: str
    new_id: str | None
    reason: str | None = None


class _Record(RunRecord):
    verb = "rewound"

    def rewound(self, entry: dict[str, Any], outcome: RewindOutcome) -> None:
        self._record(entry, outcome)


def run(req: RewindRequest, environment: Environment | None = None, report: Report | None = None) -> EraseOutcome:
    """Deprecated: ``rewind_thread`` on the store the API opens (api/front.py). Opens the store
    (writable unless a dry run) and rewinds as ``rewind_thread``."""
    from symfonic_cli.stores import open_store

    report = report or Report()
    store = open_store(req.location, writable=not req.dry_run, **req.options)
    report.opened(store.open_warnings)
    return rewind_thread(store, req, environment, report)


def rewind_thread(store: Store, req: RewindRequest, environment: Environment | None = None,
                  report: Report | None = None) -> EraseOutcome:
    """Rewind the one thread ``req`` names in ``store`` (opened writable unless a dry run, its
    warnings told by the opener; closed here), telling ``report`` the plan, the confirmation and
    how the run ended (``ended``: its EraseOutcome, told before the error that ends the run);
    that EraseOutcome is returned too."""
    env = environment or Environment()
    report = report or Report()
    now = datetime.now(timezone.utc)
    name = store_name(req.location)
    receipt_file = None
    try:
        try:
            receipt_file = open_receipt(req.receipt, dry_run=req.dry_run, store=req.location)
            if not req.dry_run:
                store.set_lock_timeout(req.lock_timeout)
                hold_run_lock(store, "rewind", wait=req.wait, location=req.location, told=report.waiting)
            view = rp.build_view(store, req.key, store_name=name, to=req.to, before_message=req.before_message,
                                 now=now, idle_for=req.idle_for)
            if req.expected_head is not None and view.head.checkpoint_id != req.expected_head:
                from symfonic_cli.stores._rewind import moved

                raise HeadMoved(moved(req.key, req.expected_head, view.head.checkpoint_id))
            planned = EraseOutcome(rp.plan_document(view, kind=req.location.kind, selection=req.selection), True, "rewind")
            if req.dry_run or view.recent or req.yes:
                report.plan(view)
            else:  # the caller's step: shows the plan where the answer is read, and asks for the key
                report.confirm(Confirmation(view, "rewind", 1, req.key))
            if req.dry_run:  # it exits as the real run would, its plan the end it renders
                report.flush()
                report.ended(planned)
                if view.recent:
                    _refuse_recent(view)
                return planned
            if view.recent:
                report.flush()
                _refuse_recent(view)
            header = {k: v for k, v in new_header(req.location, store, now, operator=req.operator, ticket=req.ticket,
                                                  selection=req.selection).items() if k != "vacuum"}
            record = _Record(env, report, header=header, receipt_file=receipt_file, total=1, stream=False, progress=False)
            record.start(threads_planned=1)
            faults = Faults.from_env(report)
            faults.before_change()
            outcome, error = _change(store, view)
            entry = rp.receipt(header, view, status=outcome.status, new_id=outcome.new_id, reason=outcome.reason)["threads"][0]
            record.rewound(entry, outcome)
            stop = record.end({"status": outcome.status}, None)
            document = {**header, "threads": [entry]}
            if stop is not None:
                document["stopped"] = stop.reason
            done = EraseOutcome(document, False, "rewind", record.kept_at(stop))
            report.flush()
        finally:
            store.close()
    finally:
        if receipt_file is not None:
            receipt_file.close()

    def check() -> None:
        if error is not None:
            raise error
        if stop is not None:
            from symfonic_cli.errors import StoppedError

            raise StoppedError(stop.reason, stop.exit_code)

    report.ended(done)
    check()
    return done


def _refuse_recent(view: rp.RewindView) -> None:
    from symfonic_cli.clock import human_duration, iso_utc

    raise RecentlyWritten(f"thread '{view.key}' was written at {iso_utc(view.last_write)}, within --idle-for "
                          f"{human_duration(view.idle_for)}: the agent may be mid-run; nothing written",
                          hint="wait, or pass --idle-for 0 when no agent runs it")


def _change(store: Any, view: rp.RewindView) -> tuple[RewindOutcome, Exception | None]:
    """The one transaction, then its verification: the thread's newest root checkpoint is the copy."""
    from symfonic_cli.history.diff import resolve_ref

    key, target, head = view.key, view.target.checkpoint_id, view.head.checkpoint_id
    try:
        new_id = store.rewind_thread(key, target, head)
    except HeadMoved as exc:
        return RewindOutcome(key, rp.NOT_WRITTEN, target, head, None, exc.message), exc
    except ThreadBusy as exc:  # a lock the application held past --lock-timeout: rolled back
        busy = BusyThreads(f"thread '{key}' is busy: a lock was not had within --lock-timeout; nothing written",
                           hint="run the same command again, or raise --lock-timeout")
        return RewindOutcome(key, rp.BUSY, target, head, None, exc.message), busy
    newest = resolve_ref(store, key, "-1", namespace="")[1]
    if newest != new_id:
        reason = (f"the copy {new_id} was written, then an application wrote the thread again (its newest "
                  f"checkpoint is {newest}): the application's run continues from there")
        return RewindOutcome(key, rp.WRITTEN_AGAIN, target, head, new_id, reason), WrittenAgainError(reason)
    return RewindOutcome(key, rp.REWOUND, target, head, new_id), None
