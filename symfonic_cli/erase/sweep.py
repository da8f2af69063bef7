"""Retention sweeps (``thread erase --inactive-for/--inactive-since``), streamed batch by batch.

Memory does not grow with the number of threads: the database counts the idle threads, then
hands them out a page at a time (keyset pagination by key, ``window_keys``) with the cut-off
fixed once; each page is planned, erased thread by thread (one transaction each, the last
activity re-checked inside it) and recorded before the next page is read. Nothing per thread is
kept: the receipt file, stdout and the progress line get each thread as it happens, the counts
are the only state. Ctrl-C stops after the thread in flight (its transaction ends normally), the
``end`` record says so, exit 130; the same command run again erases the rest, because erased
threads are no longer selected.
"""

from __future__ import annotations

import os
import signal
import threading
import time
import uuid
from datetime import datetime, timezone
from typing import Any, TextIO

from symfonic_cli import __version__
from symfonic_cli.environment import Environment
from symfonic_cli.erase import plan as ep
from symfonic_cli.erase.receipt_file import ReceiptWriteError
from symfonic_cli.errors import (
    EXIT_INTERRUPTED,
    EXIT_STORE,
    EXIT_WRITTEN_AGAIN,
    EraseIncomplete,
    NotConfirmedError,
    ReceiptError,
    StoppedError,
    SymfonicError,
)
from symfonic_cli.erase.run import Stopped, erase_one, finish_store  # run.py imports this module inside run(): no cycle
from symfonic_cli.location import scrub
from symfonic_cli.render import shown_time  # times in --tz

DEFAULT_BATCH = 500
MIN_BATCH, MAX_BATCH = 1, 100_000
SAMPLE = 10  # keys the confirmation shows
# For the tests: seconds to wait after each thread, so a sweep can be interrupted part-way.
FAULT_SLOW_THREAD = "SYMFONIC_FAULT_SLOW_THREAD"
INTERRUPTED = "interrupted (Ctrl-C): stopped after the thread in flight; run the same command again to erase the rest"


class _Interrupt:
    """Ctrl-C during a sweep: the first asks to stop between threads, a second one stops at once
    (KeyboardInterrupt: the thread in flight is then reported failed, its commit unknown)."""

    def __init__(self) -> None:
        self.asked = False
        self._old = None

    def __enter__(self) -> _Interrupt:
        # Not when SIGINT is ignored (a background job of a script, nohup): the parent meant it.
        if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
            self._old = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum, frame) -> None:
        if self.asked:
            raise KeyboardInterrupt
        self.asked = True

    def __exit__(self, *exc) -> None:
        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)


class _Stream:
    """stdout for ``-f json`` (one document, its ``threads`` array written element by element) or
    ``-f jsonl`` (a ``start`` line, a line per thread, an ``end`` line: the receipt file's
    records). The document is closed on every error Python sees, so stdout never holds half of
    one (a SIGKILL can cut it: the --receipt file is the durable record)."""

    def __init__(self, out: TextIO, fmt: str, record: str = "thread") -> None:
        self.out, self.fmt, self.record = out, fmt, record
        self.head: dict[str, Any] = {}
        self.n = 0
        self.open = False

    def begin(self, head: dict[str, Any]) -> None:
        from symfonic_cli.render import json_dumps

        self.head, self.open = head, True
        if self.fmt == "jsonl":
            self.out.write(json_dumps({"record": "start", **head}) + "\n")
        else:
            self.out.write("{\n" + "".join(_member(k, v) + ",\n" for k, v in head.items()) + '  "threads": [')
        self.out.flush()

    def item(self, entry: dict[str, Any], line_head: dict[str, Any] | None = None) -> None:
        from symfonic_cli.render import json_dumps

        if self.fmt == "jsonl":
            self.out.write(json_dumps({"record": self.record, **(line_head or {}), **entry}) + "\n")
        else:
            text = json_dumps(entry, indent=2).replace("\n", "\n    ")
            self.out.write(("," if self.n else "") + "\n    " + text)
        self.n += 1

    def end(self, tail: dict[str, Any]) -> None:
        from symfonic_cli.render import json_dumps

        if not self.open:
            return
        self.open = False
        if self.fmt == "jsonl":
            self.out.write(json_dumps({"record": "end", **self.head, **tail}) + "\n")
        else:
            self.out.write(("\n  ]" if self.n else "]") + "".join(",\n" + _member(k, v) for k, v in tail.items()) + "\n}\n")
        self.out.flush()


def _member(name: str, value: Any) -> str:
    from symfonic_cli.render import json_dumps

    return f"  {json_dumps(name)}: " + json_dumps(value, indent=2).replace("\n", "\n  ")


def run_sweep(req, env: Environment) -> None:
    """Erase the threads idle since the selection's cut-off, batch by batch; raises the error that
    ends the run (stopped, a thread failed, not confirmed) after the receipt is written."""
    from symfonic_cli.erase.receipt_file import ReceiptFile
    from symfonic_cli.erase.run import _open_terminal, default_operator, receipt_store
    from symfonic_cli.render import escape_inline as esc
    from symfonic_cli.stores import open_store

    out = env.stdout
    human = req.fmt not in ("json", "jsonl")
    extra = ep.parse_extra(req.location.options)
    now = datetime.now(timezone.utc)
    store_name = receipt_store(req.location)
    sel = req.selection
    window = {"tenant": sel.tenant, "sub_tenant": sel.sub_tenant, "last_before": sel.window.last_before, "last_from": sel.window.last_from}
    batch = req.batch_size or DEFAULT_BATCH
    receipt_file = ReceiptFile(req.receipt_path, writable=not req.dry_run) if req.receipt_path else None
    terminal = None
    sweep = None
    try:
        store = open_store(req.location, writable=not req.dry_run, stderr=env.stderr, **req.options)
        try:
            notes = store.erase_prepare(extra, dry_run=req.dry_run)
            total = store.window_count(**window)  # counted in the database
            if req.dry_run:
                _dry_run(store, req, env, window, total, batch, store_name, extra, now, esc)
                return
            needs_confirm = not req.yes and total > 0
            if needs_confirm:
                terminal = _open_terminal(req, env)
            # The first batch is selected and planned before the confirmation: a thread of it that
            # an agent writes while the operator reads is then reported skipped-active.
            first = store.erase_plans(store.window_keys(**window, limit=min(batch, total)), extra) if total else []
            plan_out = terminal.writer if terminal is not None else (out if human else None)
            if plan_out is not None:
                _print_sweep_plan(plan_out, req, store_name, total, batch, first[:SAMPLE], now, esc, env)
            if needs_confirm:
                _confirm_count(terminal, total)
            header = ep.receipt_header(
                receipt_id=str(uuid.uuid4()), now=now, version=__version__, store=store_name,
                kind=req.location.kind, operator=req.operator or default_operator(), ticket=req.ticket,
                selection=sel.receipt, vacuum=req.vacuum,
            )
            if receipt_file is not None:
                try:
                    receipt_file.append({"record": "start", **header, "threads_planned": total, "batch_size": batch})
                except ReceiptWriteError as exc:
                    raise ReceiptError(f"{exc}; nothing erased") from None
            sweep = _Sweep(store, req, env, extra, window, total, batch, header, receipt_file, now, esc)
            sweep.run(first)
            stop = finish_store(store, req, notes, sweep.stop)
        finally:
            store.close()
        summary = sweep.summary(stop)
        tail: dict[str, Any] = {"summary": summary, "interrupted": bool(stop and stop.exit_code == EXIT_INTERRUPTED)}
        if stop is not None:
            tail["stopped"] = stop.reason
        tail.update({"notes": notes, "not_erased": ep.NOT_ERASED})
        if receipt_file is not None and (stop is None or stop.receipt_file_ok):
            try:
                receipt_file.append({"record": "end", **header, **tail})
            except ReceiptWriteError as exc:
                stop = stop or Stopped(f"{exc} (the end line; every thread's line was written)", EXIT_STORE, False)
                tail["stopped"] = stop.reason
        if human:
            from symfonic_cli.render import json_dumps

            out.write("receipt:\n" + json_dumps({**header, **tail}, indent=2, visible=True) + "\n")
            line = ep.summary_line({"summary": summary, "threads": []})
            if sweep.recent:
                line += f"; warning: {sweep.recent} thread(s) had recent activity, a running agent may write them again"
            out.write(line + "\n")
        else:
            sweep.stream.end(tail)
        out.flush()
    finally:
        if sweep is not None and sweep.stream.open:
            # An error after the threads: the document on stdout is still closed, and says so.
            sweep.stream.end({"summary": sweep.summary(True), "stopped": "stopped by an unexpected error after the last thread"})
        if receipt_file is not None:
            receipt_file.close()
        if terminal is not None:
            terminal.close()
    if stop is not None:
        raise StoppedError(
            f"{stop.reason}; {summary['threads']} of {total} thread(s) done, {summary['erased']} erased", stop.exit_code)
    if sweep.failed:
        raise EraseIncomplete(EXIT_STORE if sweep.unverified else EXIT_WRITTEN_AGAIN)


class _Sweep:
    """The erase loop: pages of keys, each page planned then erased thread by thread."""

    def __init__(self, store, req, env, extra, window, total, batch, header, receipt_file, now, esc) -> None:
        from symfonic_cli.progress import Progress

        self.store, self.req, self.extra, self.window = store, req, extra, window
        self.total, self.batch, self.header, self.receipt_file, self.now, self.esc = total, batch, header, receipt_file, now, esc
        self.human = req.fmt not in ("json", "jsonl")
        self.lines = env.stdout if self.human else env.stderr  # a line per thread for a reader
        self.stream = _Stream(env.stdout, req.fmt)
        self.progress = Progress(env.stderr, "erased", total)
        self.counts = dict.fromkeys(ep.STATUSES, 0)
        self.done = 0
        self.failed = self.unverified = self.recent = 0
        self.stop: Stopped | None = None
        self._slow = _env_float(FAULT_SLOW_THREAD)

    def run(self, first: list) -> None:
        if not self.human:
            self.stream.begin(self.header)
        plans = first
        try:
            with _Interrupt() as interrupt:
                # Never more than the number counted and confirmed (a thread cannot become idle
                # after a cut-off fixed in the past, but a restored backup could add old ones).
                while plans and self.stop is None:
                    for plan in plans:
                        if interrupt.asked:
                            self.stop = Stopped(INTERRUPTED, EXIT_INTERRUPTED)
                            break
                        self._one(plan)
                        if self.stop is not None:
                            break
                    if self.stop is not None or self.done >= self.total or len(plans) < self.batch:
                        break
                    keys = self.store.window_keys(**self.window, after=plans[-1].key, limit=min(self.batch, self.total - self.done))
                    plans = self.store.erase_plans(keys, self.extra)
                if self.stop is None and interrupt.asked and self.done < self.total:
                    self.stop = Stopped(INTERRUPTED, EXIT_INTERRUPTED)
        except KeyboardInterrupt:  # a second Ctrl-C between two threads
            self.stop = Stopped(INTERRUPTED, EXIT_INTERRUPTED)
        except SymfonicError as exc:  # selecting or planning the next page failed
            self.stop = Stopped(f"stopped: {scrub(exc.line(), self.req.location)}", exc.exit_code)
        finally:
            self.progress.end(self.done)

    def _one(self, plan) -> None:
        result, stop = erase_one(self.store, plan, self.extra, self.req, self.now, idle_before=self.req.selection.window.last_before)
        self.stop = stop or self.stop
        self._record(result)
        if self._slow:
            time.sleep(self._slow)

    def _record(self, result: ep.ThreadOutcome) -> None:
        from symfonic_cli.erase.run import _detail

        entry = ep.thread_entry(result, self.req.location.kind, self.req.grace)
        self.counts[result.status] += 1
        self.done += 1
        if result.status == ep.FAILED:
            self.failed += 1
            self.unverified += result.remaining is None
        self.recent += "warning" in entry
        if self.receipt_file is not None and (self.stop is None or self.stop.receipt_file_ok):
            try:
                self.receipt_file.append({"record": "thread", **self.header, **entry})
            except ReceiptWriteError as exc:
                self.stop = self.stop or Stopped(str(exc), EXIT_STORE, False)
        self.progress.clear()
        self.lines.write(f"{result.status} {self.esc(result.key)}{_detail(result, self.esc)}\n")
        self.lines.flush()
        if not self.human:
            self.stream.item(entry, self.header)
        self.progress.step(self.done)

    def summary(self, stop) -> dict[str, int]:
        c = self.counts
        return {
            "planned": self.total,
            "threads": self.done,
            "erased": c[ep.ERASED],
            "nothing_to_erase": c[ep.NOTHING],
            "failed": c[ep.FAILED],
            "not_found": 0,
            "already_erased": 0,
            "not_attempted": self.total - self.done if stop is not None else 0,
            "skipped_active": c[ep.SKIPPED_ACTIVE],
        }


def _dry_run(store, req, env, window, total, batch, store_name, extra, now, esc) -> None:
    """The plan of every idle thread, streamed page by page; nothing deleted."""
    out = env.stdout
    human = req.fmt not in ("json", "jsonl")
    stream = _Stream(out, req.fmt, record="plan")
    if human:
        out.write(f"erase plan for {esc(store_name)}: {total:,} idle thread(s) (last activity before {shown_time(req.selection.receipt.get('cut_off'), env)}), in batches of {batch:,}\n")
    else:
        stream.begin({"dry_run": True, "store": store_name, "store_kind": req.location.kind, "selection": req.selection.receipt, "batch_size": batch})
    after, n, rows = None, 0, 0
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
                    out.write(_plan_line(record, req, esc, env) + "\n")
                else:
                    stream.item(record)
    finally:
        summary = {"threads": n, "to_erase": n, "rows": rows, "not_found": 0, "already_erased": 0, "nothing_to_erase": 0}
        if human:
            out.write(ep.NOT_ERASED + "\n" + "dry run: nothing deleted\n")
        else:
            stream.end({"summary": summary, "not_erased": ep.NOT_ERASED})
        out.flush()


def _plan_line(r: dict, req, esc, env) -> str:
    rows = ", ".join(f"{esc(t)} {n}" for t, n in r["rows"].items())
    line = f"  {esc(r['key'])}: {r['total']} row(s) ({rows}); first activity {shown_time(r['first_activity'], env)}, last {shown_time(r['last_activity'], env)}"
    if r["recent"]:
        line += f" [recent: active in the last {ep._human(req.grace)}]"
    return line


def _print_sweep_plan(out: TextIO, req, store_name: str, total: int, batch: int, sample, now, esc, env) -> None:
    """What the operator confirms: the count (from the database), the cut-off, and the first keys."""
    cut_off = shown_time(req.selection.receipt.get("cut_off"), env)
    out.write(f"erase plan for {esc(store_name)}: {total:,} thread(s) idle since {cut_off} to erase, in batches of {batch:,}\n")
    if not total:
        out.write("  no thread matches\n")
    records = ep.plan_records(sample, now, req.grace)
    if records:
        more = f" (the first {len(records)} by key)" if total > len(records) else ""
        out.write(f"  threads{more}:\n")
    for r in records:
        out.write(_plan_line(r, req, esc, env) + "\n")
    if total > len(records):
        out.write(f"  ... and {total - len(records):,} more (thread erase --dry-run lists every one)\n")
    out.write(ep.NOT_ERASED + "\n")
    out.flush()


def _confirm_count(terminal, total: int) -> None:
    if terminal is None:
        raise NotConfirmedError("not confirmed: no terminal to confirm on, nothing deleted", hint="pass --yes to erase without a prompt")
    terminal.writer.write(f"Type the number of threads ({total}) to erase them: ")
    terminal.writer.flush()
    answer = terminal.reader.readline()
    if answer.endswith("\n"):
        answer = answer[:-1]
    if answer.endswith("\r"):
        answer = answer[:-1]
    if answer != str(total):
        raise NotConfirmedError(f"not confirmed: expected '{total}', nothing deleted")


def _env_float(name: str) -> float:
    raw = os.environ.get(name)
    try:
        return max(0.0, float(raw)) if raw else 0.0
    except ValueError:
        return 0.0
