"""Erase, the orchestration: plan, confirm, erase thread by thread, verify, receipt."""

from __future__ import annotations

import os
import signal
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, NamedTuple, TextIO

from symfonic_cli import __version__
from symfonic_cli.environment import Environment
from symfonic_cli.erase import plan as ep
from symfonic_cli.erase.receipt_file import ReceiptWriteError
from symfonic_cli.errors import (
    EXIT_INTERRUPTED,
    EXIT_STORE,
    EXIT_UNEXPECTED,
    EXIT_WRITTEN_AGAIN,
    EraseIncomplete,
    NotConfirmedError,
    NotFoundError,
    ReceiptError,
    StoppedError,
    SymfonicError,
    ThreadActiveError,
    UsageError,
)
from symfonic_cli.location import StoreLocation, scrub
from symfonic_cli.selection import Selection

# Fault injection for the tests (the process is killed, as by an operator or the OOM killer):
# after N threads are committed, or inside the N-th thread's transaction before its COMMIT.
FAULT_AFTER_THREADS = "SYMFONIC_FAULT_AFTER_THREADS"
FAULT_IN_THREAD = "SYMFONIC_FAULT_IN_THREAD"


class Stopped(NamedTuple):
    """Why a run stopped part-way (the receipt still lists what was erased) and its exit code."""

    reason: str
    exit_code: int
    receipt_file_ok: bool = True  # False: the --receipt file itself failed, write no more to it


@dataclass
class EraseRequest:
    location: StoreLocation
    options: dict[str, Any]
    selection: Selection  # requested keys, or a tenant prefix to list; .receipt is what receipts record
    dry_run: bool = False
    yes: bool = False
    vacuum: bool = False
    grace: timedelta = field(default_factory=lambda: timedelta(minutes=15))
    receipt_path: str | None = None
    fmt: str = "text"  # table and text: lines for a reader; json and jsonl: one document on stdout
    operator: str | None = None  # None: the login name, else uid:N
    ticket: str | None = None
    missing_ok: bool = False
    batch_size: int | None = None  # a retention sweep's page size (erase/sweep.py); None: its default


def default_operator() -> str:
    """Who runs the erase: the login name (getpass: LOGNAME, USER, ..., then the password
    database), else the numeric user id; never empty."""
    import getpass

    try:
        name = getpass.getuser()
    except Exception:  # no variable and no password entry (a container's arbitrary uid)
        name = ""
    return name or f"uid:{os.getuid()}"


def receipt_store(location: StoreLocation) -> str:
    """The store as the receipt names it: an absolute path for a file, else the masked URL."""
    if location.kind == "sqlite" and location.path:
        return os.path.abspath(location.path)
    return location.display


def run(req: EraseRequest, environment: Environment | None = None) -> None:
    """Erase what ``req`` selects; raises (a SymfonicError with its exit code) when the run does
    not end cleanly, after the plan and receipt are written."""
    from symfonic_cli.erase.receipt_file import ReceiptFile
    from symfonic_cli.render import escape_inline as esc
    from symfonic_cli.stores import open_store

    env = environment or Environment()
    if req.selection.window is not None:
        # A retention sweep can select any number of threads: streamed, batch by batch.
        from symfonic_cli.erase.sweep import run_sweep

        run_sweep(req, env)
        return
    out, err = env.stdout, env.stderr
    human = req.fmt not in ("json", "jsonl")
    extra = ep.parse_extra(req.location.options)
    now = datetime.now(timezone.utc)
    store_name = receipt_store(req.location)
    # Opened before anything is deleted: an unwritable audit file must stop the erase, not follow it.
    receipt_file = ReceiptFile(req.receipt_path, writable=not req.dry_run) if req.receipt_path else None
    terminal = None
    stop: Stopped | None = None
    try:
        store = open_store(req.location, writable=not req.dry_run, stderr=env.stderr, **req.options)
        try:
            # A dry run makes the real run's checks too (and exits as it would), changing nothing.
            notes = store.erase_prepare(extra, dry_run=req.dry_run)
            sel = req.selection
            keys = list(sel.keys) if sel.keys is not None else store.thread_keys_with_prefix(sel.prefix or "")
            plans = store.erase_plans(keys, extra)
            suggester, misses = _misses(store, plans, req, receipt_file, store_name)
            needs_confirm = not req.dry_run and not req.yes and bool(ep.to_erase(plans))
            if needs_confirm:
                terminal = _open_terminal(req, env)
            # What is about to be deleted goes where the operator looks: the terminal when asked
            # to confirm there (stdout may be a file), else stdout for a reader.
            plan_out = terminal.writer if terminal is not None else (out if human else None)
            if plan_out is not None:
                _print_plan(plan_out, req, store_name, plans, misses, now, esc, extra, env=env)
            if req.dry_run:
                if human:
                    out.write("dry run: nothing deleted\n")
                else:
                    _write_json(out, req.fmt, _plan_document(req, store_name, plans, misses, now))
                out.flush()
                _check_outcome(req, [], plans, misses, suggester, None)
                return
            if needs_confirm:
                _confirm(terminal, plans)
            header = ep.receipt_header(
                receipt_id=str(uuid.uuid4()), now=now, version=__version__, store=store_name,
                kind=req.location.kind, operator=req.operator or default_operator(), ticket=req.ticket,
                selection=req.selection.receipt, vacuum=req.vacuum,
            )
            if receipt_file is not None:
                try:
                    receipt_file.append({"record": "start", **header, "threads_planned": len(plans)})
                except ReceiptWriteError as exc:
                    raise ReceiptError(f"{exc}; nothing erased") from None
            progress = out if human else err
            outcomes, stop = _erase_all(store, plans, misses, extra, req, now, progress, esc, receipt_file, header)
            stop = finish_store(store, req, notes, stop)
        finally:
            store.close()
        receipt = ep.build_receipt(header, outcomes, kind=req.location.kind, notes=notes, grace=req.grace)
        if receipt_file is not None and (stop is None or stop.receipt_file_ok):
            try:
                receipt_file.append({"record": "end", **header, "summary": receipt["summary"], "notes": notes, "not_erased": ep.NOT_ERASED})
            except ReceiptWriteError as exc:
                stop = stop or Stopped(f"{exc} (the end line; every thread's line was written)", EXIT_STORE, False)
        if stop is not None:
            receipt["stopped"] = stop.reason
        if human:
            from symfonic_cli.render import json_dumps

            out.write("receipt:\n" + json_dumps(receipt, indent=2, visible=True) + "\n")
            out.write(ep.summary_line(receipt) + "\n")
        else:
            _write_json(out, req.fmt, receipt)
        out.flush()
    finally:
        if receipt_file is not None:
            receipt_file.close()
        if terminal is not None:
            terminal.close()
    _check_outcome(req, outcomes, plans, misses, suggester, stop)


def _misses(store, plans, req: EraseRequest, receipt_file, store_name: str):
    """For each requested key with no row anywhere in the cascade: not-found (with suggestions)
    or, when the --receipt file records it erased from this store, already-erased."""
    from symfonic_cli.suggestions import Suggester

    suggester = Suggester(store)
    if req.selection.keys is None:  # a prefix selection lists only keys that have rows
        return suggester, {}
    empty = [p for p in plans if not p.total]
    misses: dict[str, ep.Miss] = {}
    previous = receipt_file.previous_erasures(store_name) if receipt_file is not None and empty else {}
    for p in empty:
        earlier = previous.get(p.key)
        if earlier is not None:
            misses[p.key] = ep.Miss(ep.ALREADY_ERASED, erased_by={"receipt_id": earlier[0], "time": earlier[1]})
        else:
            misses[p.key] = ep.Miss(ep.NOT_FOUND, suggestions=suggester.suggest(p.key))
    return suggester, misses


def erase_one(store, plan: ep.ThreadErasePlan, extra, req: EraseRequest, now: datetime, *,
              idle_before: str | None = None, between=None) -> tuple[ep.ThreadOutcome, Stopped | None]:
    """One thread erased (one transaction; the store compares what it deletes with the plan, and
    with ``idle_before`` re-checks its last activity, inside it) and verified after the commit: its
    outcome, and a stop when the run cannot go on (an interrupt or an unexpected error, after which
    whether the transaction committed is unknown)."""
    stop = None
    try:
        if between is None:
            deleted, remaining = store.erase_verified(plan.key, extra, expected=plan.rows, idle_before=idle_before)
        else:  # the fault-injection hook runs between the tables' deletes
            deleted = store.erase_thread(plan.key, extra, between=between, expected=plan.rows, idle_before=idle_before)
            remaining = store.remaining_rows(plan.key, extra)
    except ThreadActiveError as exc:
        result = ep.skipped_active(plan, exc.line())
    except SymfonicError as exc:
        result = ep.failed(plan, scrub(exc.line(), req.location), now, req.grace)
    except (Exception, KeyboardInterrupt) as exc:
        what = "interrupted" if isinstance(exc, KeyboardInterrupt) else f"unexpected {type(exc).__name__}: {scrub(str(exc), req.location)}"
        result = ep.failed(plan, f"{what}; the erase may or may not have committed, rerun to know", now, req.grace)
        stop = Stopped(what, EXIT_INTERRUPTED if isinstance(exc, KeyboardInterrupt) else EXIT_UNEXPECTED)
    else:
        result = ep.outcome(plan, deleted, remaining, now, req.grace)
    result.time = datetime.now(timezone.utc)
    return result, stop


def finish_store(store, req: EraseRequest, notes: list[str], stop: Stopped | None) -> Stopped | None:
    """After the last thread: the store's own finish (WAL truncation, ``--vacuum``). The erasures are
    committed: a failure here is a note and a stop, and the receipt is still printed and written."""
    try:
        notes += store.erase_finish(vacuum=req.vacuum)
    except SymfonicError as exc:
        reason = f"finishing after the erase failed: {scrub(exc.line(), req.location)}"
        notes.append(reason)
        stop = stop or Stopped(reason, exc.exit_code)
    return stop


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
    if req.missing_ok:
        return
    where = req.location.display
    missing = [k for k, m in misses.items() if m.status == ep.NOT_FOUND]
    if len(missing) == 1:
        raise NotFoundError(not_found_message(missing[0], where, suggester))
    if missing:
        listed = ", ".join(f"'{k}'" for k in missing[:5]) + (", ..." if len(missing) > 5 else "")
        raise NotFoundError(f"{len(missing)} requested threads not found in {where}: {listed} (suggestions in the plan and receipt; --missing-ok to accept)")
    if req.selection.keys is None and not plans:
        raise NotFoundError(f"no thread matches the prefix '{req.selection.prefix}' in {where}", hint="--missing-ok to accept")


def _write_json(out: TextIO, fmt: str, doc: dict) -> None:
    from symfonic_cli.render import json_dumps

    out.write(json_dumps(doc, indent=2 if fmt == "json" else None) + "\n")


def _plan_document(req: EraseRequest, store_name: str, plans, misses, now) -> dict[str, Any]:
    records = ep.plan_records(plans, now, req.grace, misses)
    counts = {s: sum(1 for r in records if r["status"] == s) for s in ("erase", ep.NOT_FOUND, ep.ALREADY_ERASED, ep.NOTHING)}
    return {
        "dry_run": True,
        "store": store_name,
        "store_kind": req.location.kind,
        "selection": req.selection.receipt,
        "summary": {
            "threads": len(records), "to_erase": counts["erase"], "not_found": counts[ep.NOT_FOUND],
            "already_erased": counts[ep.ALREADY_ERASED], "nothing_to_erase": counts[ep.NOTHING],
        },
        "threads": records,
        "not_erased": ep.NOT_ERASED,
    }


def _print_plan(out: TextIO, req: EraseRequest, store_name: str, plans, misses, now, esc, extra=(), *, env) -> None:
    from symfonic_cli.render import shown_time  # times in --tz

    every_sub = {t.name for t in extra if t.all_sub_tenants}
    records = ep.plan_records(plans, now, req.grace, misses)
    todo = ep.to_erase(plans)
    out.write(f"erase plan for {esc(store_name)}: {len(todo)} of {len(plans)} thread(s) hold rows to erase\n")
    if req.selection.keys is None and not plans:
        out.write("  no thread matches\n")
    if req.fmt == "table" and records:
        _plan_table(out, records, req, every_sub, env)
        records = []
    for r in records:
        if r["status"] == ep.NOT_FOUND:
            near = ", ".join(f"'{esc(k)}'" for k in r["suggestions"])
            out.write(f"  {esc(r['key'])}: not found" + (f"; did you mean: {near}" if near else "") + "\n")
            continue
        if r["status"] == ep.ALREADY_ERASED:
            by = r["erased_by"]
            out.write(f"  {esc(r['key'])}: already erased (receipt {esc(by['receipt_id'])} at {esc(shown_time(by['time'], env))})\n")
            continue
        if not r["total"]:
            out.write(f"  {esc(r['key'])}: nothing to erase\n")
            continue
        rows = ", ".join(f"{esc(t)} {n}" + (" (all sub-tenants of this tenant and session)" if t in every_sub else "") for t, n in r["rows"].items())
        line = f"  {esc(r['key'])}: {r['total']} row(s) ({rows}); first activity {shown_time(r['first_activity'], env)}, last {shown_time(r['last_activity'], env)}"
        if r["recent"]:
            line += f" [recent: active in the last {ep._human(req.grace)}]"
        out.write(line + "\n")
    out.write(ep.NOT_ERASED + "\n")
    out.flush()


def _plan_table(out: TextIO, records, req: EraseRequest, every_sub, env) -> None:
    from symfonic_cli import render

    rows = []
    for r in records:
        # Raw text: the table escapes every cell once.
        if r["status"] == ep.NOT_FOUND:
            what = "not found" + (f"; did you mean: {', '.join(r['suggestions'])}" if r["suggestions"] else "")
        elif r["status"] == ep.ALREADY_ERASED:
            what = f"already erased (receipt {r['erased_by']['receipt_id']})"
        elif not r["total"]:
            what = "nothing to erase"
        else:
            what = ", ".join(f"{t} {n}" + (" (all sub-tenants of this tenant and session)" if t in every_sub else "") for t, n in r["rows"].items())
            if r["recent"]:
                what += f" [recent: active in the last {ep._human(req.grace)}]"
        rows.append({"key": r["key"], "rows": r["total"], "what": what, "first": r["first_activity"], "last": r["last_activity"]})
    render.write_records(rows, fmt="table", columns=("key", "rows", "what", "first", "last"),
                         headers=("thread", "rows", "tables", "first activity", "last activity"), environment=env, stream=out)


class _Terminal:
    """Where the plan and the prompt are shown and the answer is read."""

    def __init__(self, reader, writer, owned=None) -> None:
        self.reader, self.writer, self.owned = reader, writer, owned

    def close(self) -> None:
        for stream in self.owned or ():
            stream.close()


def _open_terminal(req: EraseRequest, env: Environment) -> _Terminal | None:
    if req.selection.from_stdin:  # then a confirmation is read from /dev/tty
        # Standard input held the keys: the answer can only come from the controlling terminal.
        try:
            reader = open("/dev/tty", encoding="utf-8", errors="replace")
        except OSError:
            return None
        try:
            writer = open("/dev/tty", "w", encoding="utf-8", errors="backslashreplace")
        except OSError:
            reader.close()
            return None
        return _Terminal(reader, writer, (reader, writer))
    if not env.stdin_isatty():
        return None
    return _Terminal(env.stdin, env.stderr)


def _confirm(terminal: _Terminal | None, plans) -> None:
    from symfonic_cli.render import escape_inline

    if terminal is None:
        raise NotConfirmedError("not confirmed: no terminal to confirm on, nothing deleted", hint="pass --yes to erase without a prompt")
    expected = ep.confirmation_answer(plans)
    terminal.writer.write(f"{ep.confirmation_question(plans)}: ")
    terminal.writer.flush()
    answer = terminal.reader.readline()
    if answer.endswith("\n"):
        answer = answer[:-1]
    if answer.endswith("\r"):
        answer = answer[:-1]
    # The key exactly, or as the plan shows it (escaped): never a trimmed or folded look-alike.
    if answer not in (expected, escape_inline(expected)):
        raise NotConfirmedError(f"not confirmed: expected '{expected}', nothing deleted")


def _erase_all(store, plans, misses, extra, req: EraseRequest, now, out: TextIO, esc, receipt_file, header):
    """Erase thread by thread; each thread's receipt line is on disk before the next thread starts.
    Returns the outcomes and, when the run stopped part-way (the receipt file failed, an
    interrupt, an unexpected error), why: the receipt is printed all the same."""
    after_threads = _env_int(FAULT_AFTER_THREADS)
    in_thread = _env_int(FAULT_IN_THREAD)
    outcomes: list[ep.ThreadOutcome] = []
    for n, plan in enumerate(plans, start=1):
        miss = misses.get(plan.key)
        if miss is not None:
            result = ep.missed(plan, miss)
        else:
            result, stop = erase_one(store, plan, extra, req, now, between=_killer(plan, out) if in_thread == n else None)
            if stop is not None:
                outcomes.append(result)
                out.write(f"{result.status} {esc(plan.key)}{_detail(result, esc)}\n")
                _append_line(receipt_file, header, result, req)
                outcomes += [ep.not_attempted(p, f"not attempted: {stop.reason}") for p in plans[n:]]
                return outcomes, stop
        outcomes.append(result)
        out.write(f"{result.status} {esc(plan.key)}{_detail(result, esc)}\n")
        out.flush()
        if receipt_file is not None:
            try:
                receipt_file.append({"record": "thread", **header, **ep.thread_entry(result, req.location.kind, req.grace)})
            except ReceiptWriteError as exc:
                outcomes += [ep.not_attempted(p, f"not attempted: {exc}") for p in plans[n:]]
                return outcomes, Stopped(str(exc), EXIT_STORE, False)
        if after_threads is not None and n >= after_threads:
            _kill(out)
    return outcomes, None


def _append_line(receipt_file, header, result, req: EraseRequest) -> None:
    if receipt_file is not None:
        try:
            receipt_file.append({"record": "thread", **header, **ep.thread_entry(result, req.location.kind, req.grace)})
        except ReceiptWriteError:
            pass  # already stopping; the receipt on stdout has it


def _detail(result: ep.ThreadOutcome, esc) -> str:
    if result.reason:
        return f": {esc(result.reason)}"
    if result.miss is not None:
        if result.miss.erased_by:
            return f" (receipt {esc(result.miss.erased_by['receipt_id'])})"
        near = ", ".join(f"'{esc(k)}'" for k in result.miss.suggestions)
        return f"; did you mean: {near}" if near else ""
    return f" ({sum(result.rows_deleted.values())} row(s))"


def _killer(plan, out):
    # plan.rows lists the cascade in delete order: at its last table every delete has run, uncommitted.
    last = list(plan.rows)[-1]

    def between(table: str) -> None:
        if table == last:
            _kill(out)

    return between


def _kill(out) -> None:
    out.flush()
    os.kill(os.getpid(), signal.SIGKILL)


def _env_int(name: str) -> int | None:
    raw = os.environ.get(name)
    if not raw:
        return None
    try:
        return int(raw)
    except ValueError:
        raise UsageError(f"{name} must be an integer") from None
