"""Erase, the orchestration: plan, confirm, erase thread by thread, verify, receipt."""

from __future__ import annotations

import os
import signal
import sys
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, TextIO

from symfonic_cli import __version__, erase_plan as ep
from symfonic_cli.errors import EXIT_OK, EXIT_STORE, EXIT_UNEXPECTED, NotConfirmedError, SymfonicError, UsageError
from symfonic_cli.location import StoreLocation, scrub

# Fault injection for the tests (the process is killed, as by an operator or the OOM killer):
# after N threads are committed, or inside the N-th thread's transaction before its COMMIT.
FAULT_AFTER_THREADS = "SYMFONIC_FAULT_AFTER_THREADS"
FAULT_IN_THREAD = "SYMFONIC_FAULT_IN_THREAD"


def stdin_is_terminal() -> bool:
    """Whether an operator can type a confirmation (replaceable in tests of the prompt)."""
    try:
        return sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False


@dataclass
class EraseRequest:
    location: StoreLocation
    options: dict[str, Any]
    selection: dict[str, Any]  # as recorded in the receipt: {"thread": k} | {"prefix": p} | {"from_file": f}
    keys: list[str] | None = None  # explicit keys, or None to list them by prefix
    prefix: str | None = None
    dry_run: bool = False
    yes: bool = False
    vacuum: bool = False
    grace: timedelta = field(default_factory=lambda: timedelta(minutes=15))
    receipt_path: Path | None = None


def run(req: EraseRequest, out: TextIO | None = None, err: TextIO | None = None) -> int:
    from symfonic_cli.render import escape_inline, json_dumps
    from symfonic_cli.stores import open_store

    out = out or sys.stdout
    err = err or sys.stderr
    extra = ep.parse_extra(req.location.options)
    now = datetime.now(timezone.utc)
    receipt_file = _open_receipt(req.receipt_path) if req.receipt_path and not req.dry_run else None
    try:
        store = open_store(req.location, writable=not req.dry_run, **req.options)
        try:
            # A dry run makes the real run's checks too (and exits as it would), changing nothing.
            notes = store.erase_prepare(extra, dry_run=req.dry_run)
            keys = req.keys if req.keys is not None else store.thread_keys_with_prefix(req.prefix or "")
            plans = [store.erase_plan(k, extra) for k in keys]
            _print_plan(out, req, plans, now, escape_inline, extra)
            if req.dry_run:
                out.write("dry run: nothing deleted\n")
                return EXIT_OK
            if ep.to_erase(plans):
                _confirm(req, plans, out, err, escape_inline)
            outcomes = _erase_all(store, plans, extra, req, now, out, escape_inline)
            notes += store.erase_finish(vacuum=req.vacuum)
        finally:
            store.close()
        receipt = ep.build_receipt(
            version=__version__,
            store=req.location.display,
            kind=req.location.kind,
            operator=os.environ.get("USER") or os.environ.get("LOGNAME"),
            selection=req.selection,
            outcomes=outcomes,
            notes=notes,
            vacuum=req.vacuum,
            grace=req.grace,
            now=now,
        )
        out.write("receipt:\n" + json_dumps(receipt, indent=2) + "\n")
        if receipt_file is not None:
            receipt_file.write(json_dumps(receipt) + "\n")
            receipt_file.flush()
            os.fsync(receipt_file.fileno())
        out.write(ep.summary_line(receipt) + "\n")
        out.flush()
    finally:
        if receipt_file is not None:
            receipt_file.close()
    failures = [o for o in outcomes if o.status == ep.FAILED]
    if not failures:
        return EXIT_OK
    return EXIT_STORE if any(o.remaining is None for o in failures) else EXIT_UNEXPECTED


def _open_receipt(path: Path):
    # Opened before anything is deleted: an unwritable audit file must stop the erase, not follow it.
    try:
        return open(path, "a", encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot append to receipt file {path}: {exc.strerror}") from None


def _print_plan(out: TextIO, req: EraseRequest, plans, now, esc, extra=()) -> None:
    every_sub = {t.name for t in extra if t.all_sub_tenants}
    records = ep.plan_records(plans, now, req.grace)
    todo = ep.to_erase(plans)
    out.write(f"erase plan for {req.location.display}: {len(todo)} of {len(plans)} thread(s) hold rows to erase\n")
    for r in records:
        if not r["total"]:
            out.write(f"  {esc(r['key'])}: nothing to erase\n")
            continue
        rows = ", ".join(f"{esc(t)} {n}" + (" (all sub-tenants of this tenant and session)" if t in every_sub else "") for t, n in r["rows"].items())
        line = f"  {esc(r['key'])}: {r['total']} row(s) ({rows}); first activity {r['first_activity']}, last {r['last_activity']}"
        if r["recent"]:
            line += f" [recent: active in the last {ep._human(req.grace)}]"
        out.write(line + "\n")
    out.write(ep.NOT_ERASED + "\n")
    out.flush()


def _confirm(req: EraseRequest, plans, out: TextIO, err: TextIO, esc) -> None:
    if req.yes:
        return
    if not stdin_is_terminal():
        raise NotConfirmedError("not confirmed: no terminal to confirm on, nothing deleted", hint="pass --yes to erase without a prompt")
    expected = ep.confirmation_answer(plans)
    err.write(f"{ep.confirmation_question(plans)}: ")
    err.flush()
    answer = sys.stdin.readline()
    if answer.strip() != expected:
        raise NotConfirmedError(f"not confirmed: expected {esc(expected)!r}, nothing deleted")


def _erase_all(store, plans, extra, req: EraseRequest, now, out: TextIO, esc) -> list[ep.ThreadOutcome]:
    after_threads = _env_int(FAULT_AFTER_THREADS)
    in_thread = _env_int(FAULT_IN_THREAD)
    outcomes = []
    for n, plan in enumerate(plans, start=1):
        between = _killer(plan) if in_thread == n else None
        try:
            # the store compares what it deletes with the plan inside the transaction
            deleted = store.erase_thread(plan.key, extra, between=between, expected=plan.rows)
            remaining = store.remaining_rows(plan.key, extra)
        except SymfonicError as exc:
            result = ep.failed(plan, scrub(exc.line(), req.location), now, req.grace)
        else:
            result = ep.outcome(plan, deleted, remaining, now, req.grace)
        outcomes.append(result)
        detail = f": {result.reason}" if result.reason else f" ({sum(result.rows_deleted.values())} row(s))"
        out.write(f"{result.status} {esc(plan.key)}{detail}\n")
        out.flush()
        if after_threads is not None and n >= after_threads:
            _kill()
    return outcomes


def _killer(plan):
    # plan.rows lists the cascade in delete order: at its last table every delete has run, uncommitted.
    last = list(plan.rows)[-1]

    def between(table: str) -> None:
        if table == last:
            _kill()

    return between


def _kill() -> None:
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)


def _env_int(name: str) -> int | None:
    raw = os.environ.get(name)
    if not raw:
        return None
    try:
        return int(raw)
    except ValueError:
        raise UsageError(f"{name} must be an integer") from None
