"""What a store-changing run prints: plans, per-thread lines, the JSON documents on stdout.

Every text taken from the store is escaped here (``esc`` is ``render.escape_inline``); times are
shown in ``--tz``. API:
- ``plan_line(record, grace, every_sub=())``: one planned thread (``ep.plan_records`` gives the records);
- ``print_plan(out, ...)``: a request's plan (text, or a table with ``fmt="table"``), then NOT_ERASED;
- ``print_sweep_plan(out, ...)``: a counted selection: the count, the cut-off and the first keys;
- ``plan_document(...)``: a request's dry run as one JSON document;
- ``suggestion_lines(err, misses)``: not-found keys' suggestions, on stderr only;
- ``thread_line(outcome)``: ``<status> <key><detail>``, the line printed per thread as it is done;
- ``write_json(out, fmt, doc)``: one document, indented for ``json``, one line for ``jsonl``;
- ``print_receipt(out, receipt, line, kept_at)``: a reader's end: the summary and the receipt
  file's path, or the whole receipt when no file holds it;
- ``JsonStream``: a document whose ``threads`` array is written element by element (or JSONL records).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, TextIO

from symfonic_cli.erase import plan as ep

ALL_SUBS = " (all sub-tenants of this tenant and session)"


def _esc(text: str) -> str:
    from symfonic_cli.render import escape_inline

    return escape_inline(text)


def _shown(iso: str | None, env) -> str:
    from symfonic_cli.render import shown_time  # times in --tz

    return shown_time(iso, env)


def _when(iso: str | None, env) -> str:
    return _shown(iso, env) if iso is not None else "undatable"  # no time in the id, no ts


def write_json(out: TextIO, fmt: str, doc: dict) -> None:
    from symfonic_cli.render import json_dumps

    out.write(json_dumps(doc, indent=2 if fmt == "json" else None) + "\n")


def plan_line(r: dict, grace: timedelta, env, every_sub=frozenset()) -> str:
    rows = ", ".join(f"{_esc(t)} {n}" + (ALL_SUBS if t in every_sub else "") for t, n in r["rows"].items())
    line = f"  {_esc(r['key'])}: {r['total']} row(s) ({rows}); first activity {_when(r['first_activity'], env)}, last {_when(r['last_activity'], env)}"
    if r["recent"]:
        line += f" [recent: active in the last {ep.human_duration(grace)}]"
    return line


def plan_document(*, store_name: str, kind: str, selection: dict, plans, misses, now: datetime, grace: timedelta) -> dict[str, Any]:
    records = ep.plan_records(plans, now, grace, misses)
    counts = {s: sum(1 for r in records if r["status"] == s) for s in ("erase", ep.NOT_FOUND, ep.ALREADY_ERASED, ep.NOTHING)}
    return {
        "dry_run": True,
        "store": store_name,
        "store_kind": kind,
        "selection": selection,
        "summary": {
            "threads": len(records), "to_erase": counts["erase"], "not_found": counts[ep.NOT_FOUND],
            "already_erased": counts[ep.ALREADY_ERASED], "nothing_to_erase": counts[ep.NOTHING],
        },
        "threads": records,
        "not_erased": ep.NOT_ERASED,
    }


def print_plan(out: TextIO, *, store_name: str, plans, misses, now: datetime, grace: timedelta, fmt: str,
               by_prefix: bool, env, extra=()) -> None:
    """A request's plan: one line per thread (or a table), then what is not erased."""
    every_sub = {t.name for t in extra if t.all_sub_tenants}
    records = ep.plan_records(plans, now, grace, misses)
    todo = ep.to_erase(plans)
    out.write(f"erase plan for {_esc(store_name)}: {len(todo)} of {len(plans)} thread(s) hold rows to erase\n")
    if by_prefix and not plans:
        out.write("  no thread matches\n")
    if fmt == "table" and records:
        _plan_table(out, records, grace, env, every_sub)
        records = []
    for r in records:
        if r["status"] == ep.NOT_FOUND:
            out.write(f"  {_esc(r['key'])}: not found\n")
        elif r["status"] == ep.ALREADY_ERASED:
            by = r["erased_by"]
            out.write(f"  {_esc(r['key'])}: already erased (receipt {_esc(by['receipt_id'])} at {_esc(_shown(by['time'], env))})\n")
        elif not r["total"]:
            out.write(f"  {_esc(r['key'])}: nothing to erase\n")
        else:
            out.write(plan_line(r, grace, env, every_sub) + "\n")
    out.write(ep.NOT_ERASED + "\n")
    out.flush()


def _plan_table(out: TextIO, records, grace: timedelta, env, every_sub=frozenset()) -> None:
    from symfonic_cli import render

    rows = []
    for r in records:
        # Raw text: the table escapes every cell once.
        if r["status"] == ep.NOT_FOUND:
            what = "not found"
        elif r["status"] == ep.ALREADY_ERASED:
            what = f"already erased (receipt {r['erased_by']['receipt_id']})"
        elif not r["total"]:
            what = "nothing to erase"
        else:
            what = ", ".join(f"{t} {n}" + (ALL_SUBS if t in every_sub else "") for t, n in r["rows"].items())
            if r["recent"]:
                what += f" [recent: active in the last {ep.human_duration(grace)}]"
        rows.append({"key": r["key"], "rows": r["total"], "what": what, "first": r["first_activity"], "last": r["last_activity"]})
    render.write_records(rows, fmt="table", columns=("key", "rows", "what", "first", "last"),
                         headers=("thread", "rows", "tables", "first activity", "last activity"), environment=env, stream=out)


def print_sweep_plan(out: TextIO, *, store_name: str, cut_off: str | None, total: int, batch: int, sample,
                     now: datetime, grace: timedelta, env) -> None:
    """What the operator confirms: the count (from the database), the cut-off, and the first keys."""
    out.write(f"erase plan for {_esc(store_name)}: {total:,} thread(s) idle since {_shown(cut_off, env)} to erase, in batches of {batch:,}\n")
    if not total:
        out.write("  no thread matches\n")
    records = ep.plan_records(sample, now, grace)
    if records:
        more = f" (the first {len(records)} by key)" if total > len(records) else ""
        out.write(f"  threads{more}:\n")
    for r in records:
        out.write(plan_line(r, grace, env) + "\n")
    if total > len(records):
        out.write(f"  ... and {total - len(records):,} more (thread erase --dry-run lists every one)\n")
    out.write(ep.NOT_ERASED + "\n")
    out.flush()


def sweep_dry_run_head(store_name: str, cut_off: str | None, total: int, batch: int, env) -> str:
    return f"erase plan for {_esc(store_name)}: {total:,} idle thread(s) (last activity before {_shown(cut_off, env)}), in batches of {batch:,}\n"


def detail(result: ep.ThreadOutcome) -> str:
    if result.reason:
        return f": {_esc(result.reason)}"
    if result.miss is not None:
        if result.miss.erased_by:
            return f" (receipt {_esc(result.miss.erased_by['receipt_id'])})"
        return ""  # suggestions go to stderr only (suggestion_lines)
    return f" ({sum(result.rows_deleted.values())} row(s))"


def suggestion_lines(err: TextIO, misses: dict) -> None:
    """Each not-found key's near misses, on stderr only: they are other people's keys, never
    written to stdout (a file, a pipe) or to a receipt."""
    for key, miss in misses.items():
        if miss.status == ep.NOT_FOUND:
            near = ", ".join(f"'{_esc(k)}'" for k in miss.suggestions)
            err.write(f"symfonic: not found: '{_esc(key)}'" + (f"; did you mean: {near}" if near else "") + "\n")
    err.flush()


def thread_line(result: ep.ThreadOutcome) -> str:
    return f"{result.status} {_esc(result.key)}{detail(result)}\n"


def print_receipt(out: TextIO, receipt: dict[str, Any], line: str, kept_at: str | None = None) -> None:
    """The end for a reader: the summary line and where the receipt is kept (``kept_at``, the
    --receipt file holding every line of it), else the whole receipt (then the only record)."""
    from symfonic_cli.render import json_dumps

    if kept_at is None:
        out.write("receipt:\n" + json_dumps(receipt, indent=2, visible=True) + "\n")
    out.write(line + "\n")
    if kept_at is not None:
        out.write(f"receipt {_esc(str(receipt.get('receipt_id')))}: {_esc(kept_at)}\n")


class JsonStream:
    """stdout for ``-f json`` (one document, its ``threads`` array written element by element) or
    ``-f jsonl`` (a ``start`` line, a line per thread, an ``end`` line: the receipt file's
    records). ``end`` closes the document; a driver calls it on every error Python sees, so stdout
    never holds half of one (a SIGKILL can cut it: the --receipt file is the durable record)."""

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

    def end(self, tail: dict[str, Any], line_head: dict[str, Any] | None = None) -> None:
        """``line_head``: fields of the ``end`` line (jsonl) over the head's (its end time)."""
        from symfonic_cli.render import json_dumps

        if not self.open:
            return
        self.open = False
        if self.fmt == "jsonl":
            self.out.write(json_dumps({"record": "end", **self.head, **(line_head or {}), **tail}) + "\n")
        else:
            self.out.write(("\n  ]" if self.n else "]") + "".join(",\n" + _member(k, v) for k, v in tail.items()) + "\n}\n")
        self.out.flush()


def _member(name: str, value: Any) -> str:
    from symfonic_cli.render import json_dumps

    return f"  {json_dumps(name)}: " + json_dumps(value, indent=2).replace("\n", "\n  ")
