"""What a store-changing run (erase, a sweep, prune) prints: plans, per-thread lines, the JSON
documents on stdout. The drivers write no text: they tell their events to the caller's Report
(changes/report.py); cli/report.py's TextReport renders them with what is here.

Every text taken from the store is escaped here (``esc`` is ``render.escape_inline``); times are
shown in ``--tz``. On a terminal every line a reader gets wraps to its width (render/fit.py: keys,
ids, times and counts whole, text between words); off one, each stays one line. API:
- ``width_of(stream)``: the width to wrap to, None off a terminal; ``write_fitted(out, pieces)``;
- ``plan_line(record, grace, env, every_sub=(), width=None)``: one planned thread (``ep.plan_records`` gives the records);
- ``print_plan(out, ...)``: a request's plan (text, or a table with ``fmt="table"``), then NOT_ERASED;
- ``print_sweep_plan(out, ..., undatable=N)``: a counted selection: the count, the window as typed
  (``idle for 30d``) and its cut-off, the threads no time window can judge, and the first keys;
  ``sweep_dry_run_head(out, ...)``: a dry run's; ``idle_words(selection, env)``: the window as typed
  (prune's plan says it the same way);
- ``suggestion_lines(err, misses)``: not-found keys' suggestions, on stderr only (``not_found_line``);
- ``thread_line(outcome, width=None)``: ``<status> <key><detail>``, the line printed per thread as it is done;
- ``write_json(out, fmt, doc)``: one document in a format for a program (render/writers.py writes it);
- ``print_receipt(out, receipt, line, kept_at)``: a reader's end: the summary and the receipt
  file's path, or the whole receipt when no file holds it.
JSON and JSONL as a run goes are render/writers.py's ``document_stream``.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, TextIO

from symfonic_cli.api.runs import erase_plan as ep
from symfonic_cli.environment import Environment

ALL_SUBS = " (all sub-tenants of this tenant and session)"


def _esc(text: str) -> str:
    from symfonic_cli.render import escape_inline

    return escape_inline(text)


def _shown(iso: str | None, env: Environment) -> str:
    from symfonic_cli.render import shown_time  # times in --tz

    return shown_time(iso, env)


def _when(iso: str | None, env: Environment) -> str:
    return _shown(iso, env) if iso is not None else "undatable"  # no time in the id, no ts


def write_json(out: TextIO, fmt: str, doc: dict) -> None:
    from symfonic_cli.render.writers import write_document

    write_document(doc, fmt, out)


def _fit(pieces, width: int | None, indent: str = "", hang: str = "    ") -> str:
    from symfonic_cli.render.fit import fit

    return fit(pieces, width, indent=indent, hang=hang)


def width_of(out: TextIO) -> int | None:
    """The width a reader's lines wrap to on ``out`` (render/fit.py), None off a terminal."""
    from symfonic_cli.render.fit import width_of as width

    return width(out)



def write_fitted(out: TextIO, pieces, indent: str = "", hang: str = "    ") -> None:
    """One line of pieces (render/fit.py) on ``out``, wrapped to its terminal's width."""
    out.write(_fit(pieces, width_of(out), indent, hang) + "\n")


def plan_line(r: dict, grace: timedelta, env: Environment, every_sub=frozenset(), width: int | None = None) -> str:
    """One planned thread: its key whole, the rows per table, its first and last activity whole;
    wrapped under the key to ``width`` (None: one line)."""
    from symfonic_cli.render.fit import Whole, enclose, glue

    tables: list[str] = []
    for t, n in r["rows"].items():
        if tables:
            tables[-1] = glue(tables[-1], tables[-1] + ",")
        tables.append(Whole(f"{_esc(t)} {n}"))
        if t in every_sub:
            tables.append(ALL_SUBS.strip())  # free text: wraps
    tables = enclose(tables, "(", ");")
    pieces = [Whole(_esc(r["key"]) + ":"), Whole(f"{r['total']} row(s)"), *tables,
              "first activity", Whole(_when(r["first_activity"], env) + ","), "last", Whole(_when(r["last_activity"], env))]
    if r.get("messages_retained"):
        pieces[-1] = glue(pieces[-1], pieces[-1] + ";")
        pieces += _retained_pieces(r["messages_retained"])
    if r["recent"]:
        pieces.append(f"[recent: active in the last {ep.human_duration(grace)}]")
    return _fit(pieces, width, "  ", "    ")


def _retained_pieces(n: int) -> list[str]:
    from symfonic_cli.render.fit import Whole

    return ["with", Whole(f"{n} message(s)"), "the conversation no longer shows (held by older checkpoints:",
            "transcript show --retained)"]


def print_plan(out: TextIO, *, store_name: str, plans, misses, now: datetime, grace: timedelta, fmt: str,
               by_prefix: bool, env: Environment, extra=()) -> None:
    """A request's plan: one line per thread (or a table), then what is not erased; on a terminal
    each line wraps to its width, keys, ids and times whole."""
    from symfonic_cli.render.fit import Whole

    every_sub = {t.name for t in extra if t.all_sub_tenants}
    records = ep.plan_records(plans, now, grace, misses)
    todo = ep.to_erase(plans)
    width = width_of(out)
    out.write(_fit(["erase plan for", Whole(_esc(store_name) + ":"), Whole(f"{len(todo)} of {len(plans)}"),
                    "thread(s) hold rows to erase"], width) + "\n")
    if by_prefix and not plans:
        out.write("  no thread matches\n")
    if fmt == "table" and records:
        _plan_table(out, records, grace, env, every_sub)
        records = []
    for r in records:
        key = Whole(_esc(r["key"]) + ":")
        if r["status"] == ep.NOT_FOUND:
            out.write(_fit([key, "not found"], width, "  ") + "\n")
        elif r["status"] == ep.ALREADY_ERASED:
            by = r["erased_by"]
            out.write(_fit([key, "already erased (receipt", Whole(_esc(by["receipt_id"])), "at",
                            Whole(_esc(_shown(by["time"], env)) + ")")], width, "  ") + "\n")
        elif not r["total"]:
            out.write(_fit([key, "nothing to erase"], width, "  ") + "\n")
        else:
            out.write(plan_line(r, grace, env, every_sub, width) + "\n")
    out.write(_fit([ep.NOT_ERASED], width, "", "  ") + "\n")
    out.flush()


def _plan_table(out: TextIO, records, grace: timedelta, env: Environment, every_sub=frozenset()) -> None:
    """The borderless table of render/tables.py: keys, counts, ids and times whole; the tables
    column wraps at spaces (never inside a word); first and last activity one under the other."""
    from symfonic_cli import render

    rows = []
    for r in records:
        if r["status"] == ep.NOT_FOUND:
            what = "not found"
        elif r["status"] == ep.ALREADY_ERASED:
            what = f"already erased (receipt {render.cell(r['erased_by']['receipt_id'])})"
        elif not r["total"]:
            what = "nothing to erase"
        else:
            what = ", ".join(f"{_esc(t)} {n}" + (ALL_SUBS if t in every_sub else "") for t, n in r["rows"].items())
            if r.get("messages_retained"):
                what += "; " + " ".join(_retained_pieces(r["messages_retained"]))
            if r["recent"]:
                what += f" [recent: active in the last {ep.human_duration(grace)}]"
        when = "-" if r["status"] in (ep.NOT_FOUND, ep.ALREADY_ERASED) else (
            f"{render.cell(_when(r['first_activity'], env))}\n{render.cell(_when(r['last_activity'], env))}")
        rows.append([render.cell(r["key"]), str(r["total"]), what, when])
    longest = max((render._text_width(w) for row in rows for w in row[2].split(" ")), default=1)
    render.write_table(rows, ("thread", "rows", "tables", "first / last activity"), whole=(True, True, False, True),
                       least=(0, 0, longest, 0), environment=env, stream=out)


def _undatable_pieces(undatable: int) -> list[str]:
    from symfonic_cli.render.fit import Whole

    return [Whole(f"{undatable:,} thread(s)"), "whose activity cannot be dated (a checkpoint without a time):",
            "not erased by a time window (threads list --inactive-for names them)"]


def idle_words(selection: dict[str, Any], env: Environment) -> list:
    """How long or since when the threads are idle, as typed: ``idle for 30d (last activity before
    <cut-off>)`` (a duration in its unit, as prune's ``--older-than``: clock.human_duration), or
    ``idle since <cut-off>`` for ``--inactive-since``; the cut-off instant in ``--tz``."""
    from symfonic_cli.clock import human_duration, parse_duration
    from symfonic_cli.render.fit import Whole

    cut_off = str(_shown(selection.get("cut_off"), env))
    typed = selection.get("inactive_for")
    if typed is None:
        return ["idle since", Whole(cut_off)]
    duration = human_duration(parse_duration(typed, option="--inactive-for"))  # read once already: valid
    return ["idle for", Whole(duration), "(last activity before", Whole(f"{cut_off})")]


def print_sweep_plan(out: TextIO, *, store_name: str, selection: dict[str, Any], total: int, batch: int, sample,
                     now: datetime, grace: timedelta, env: Environment, undatable: int = 0) -> None:
    """What the operator confirms: the count (from the database), the window as typed and its
    cut-off, the first keys, and the threads left alone because their activity cannot be dated;
    wrapped to a terminal."""
    from symfonic_cli.render.fit import Whole

    width = width_of(out)
    out.write(_fit(["erase plan for", Whole(_esc(store_name) + ":"), Whole(f"{total:,} thread(s)"), *idle_words(selection, env),
                    "to erase, in batches of", Whole(f"{batch:,}")], width) + "\n")
    if not total:
        out.write("  no thread matches\n")
    if undatable:
        out.write(_fit(["undatable:", *_undatable_pieces(undatable)], width, "  ") + "\n")
    records = ep.plan_records(sample, now, grace)
    if records:
        more = f" (the first {len(records)} by key)" if total > len(records) else ""
        out.write(f"  threads{more}:\n")
    for r in records:
        out.write(plan_line(r, grace, env, width=width) + "\n")
    if total > len(records):
        out.write(_fit(["...", "and", Whole(f"{total - len(records):,} more"), "(thread erase --dry-run lists every one)"], width, "  ") + "\n")
    out.write(_fit([ep.NOT_ERASED], width, "", "  ") + "\n")
    out.flush()


def sweep_dry_run_head(out: TextIO, store_name: str, selection: dict[str, Any], total: int, batch: int, env: Environment, undatable: int = 0) -> None:
    from symfonic_cli.render.fit import Whole, glue

    width = width_of(out)
    idle = idle_words(selection, env)
    idle[-1] = glue(idle[-1], idle[-1] + ",")
    out.write(_fit(["erase plan for", Whole(_esc(store_name) + ":"), Whole(f"{total:,} thread(s)"), *idle,
                    "in batches of", Whole(f"{batch:,}")], width) + "\n")
    if undatable:
        out.write(_fit(["undatable:", *_undatable_pieces(undatable)], width, "  ") + "\n")


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
            err.write(not_found_line(key, miss.suggestions, width_of(err)) + "\n")
    err.flush()


def not_found_line(key: str, suggestions, width: int | None = None) -> str:
    """``symfonic: not found: 'KEY'; did you mean: 'A', 'B'``: each key whole, wrapped to ``width``."""
    from symfonic_cli.render.fit import Whole

    near = [Whole(f"'{_esc(k)}'" + ("," if i < len(suggestions) - 1 else "")) for i, k in enumerate(suggestions)]
    head = Whole(f"'{_esc(key)}'" + (";" if near else ""))
    return _fit(["symfonic: not found:", head, *(["did you mean:", *near] if near else [])], width)


def thread_line(result: ep.ThreadOutcome, width: int | None = None) -> str:
    """``<status> <key><detail>``; wrapped to ``width`` (the key whole, a reason between words)."""
    from symfonic_cli.render.fit import Whole

    if width is None:
        return f"{result.status} {_esc(result.key)}{detail(result)}\n"
    more = detail(result)
    if more.startswith(": "):
        pieces = [result.status, Whole(_esc(result.key) + ":"), more[2:]]
    else:
        pieces = [result.status, Whole(_esc(result.key) + more)] if len(more) < 30 else [result.status, Whole(_esc(result.key)), more]
    return _fit(pieces, width) + "\n"


def print_receipt(out: TextIO, receipt: dict[str, Any], line, kept_at: str | None = None) -> None:
    """The end for a reader: the summary line (a string, or pieces to wrap: render/fit.py) and
    where the receipt is kept (``kept_at``, the --receipt file holding every line of it). Without
    a receipt file: on a terminal, a line saying how to keep one (a person reads the summary, not
    50 lines of JSON); into a pipe or a file, the whole receipt as before (the only record)."""
    from symfonic_cli.render import json_dumps
    from symfonic_cli.render.fit import Whole
    from symfonic_cli.render.terminal import is_terminal

    person = is_terminal(out)
    if kept_at is None and not person:
        out.write("receipt:\n" + json_dumps(receipt, indent=2, visible=True) + "\n")
    write_fitted(out, [line] if isinstance(line, str) else line)
    if person:
        compacted = compact_line(receipt)
        if compacted:
            write_fitted(out, [compacted])
    if kept_at is not None:
        write_fitted(out, ["receipt", Whole(_esc(str(receipt.get("receipt_id"))) + ":"), Whole(_esc(kept_at))])
    elif person:
        write_fitted(out, ["receipt", Whole(_esc(str(receipt.get("receipt_id"))) + ":"), "not kept;",
                           Whole("--receipt FILE"), "appends it to an audit file,", Whole("-f json"), "prints it"])


_MEASURES = {"file_wal": "WAL"}


def compact_line(receipt: dict[str, Any]) -> str | None:
    """``--compact``'s outcome in bytes: ``compacted: file 143,360 -> 53,248 bytes`` (each measure
    the receipt holds, the WAL too), or None when no compaction ran."""
    compact = receipt.get("compact")
    if not isinstance(compact, dict) or not compact.get("done"):
        return None
    before, after = compact.get("bytes_before") or {}, compact.get("bytes_after") or {}
    sizes = [f"{_MEASURES.get(name) or _esc(str(name)).replace('_', ' ')} {before[name]:,} \u2192 {after.get(name, 0):,} bytes"
             for name in before if isinstance(before[name], int) and isinstance(after.get(name, 0), int)]
    return "compacted: " + ", ".join(sizes) if sizes else "compacted"


def summary_line(receipt: dict[str, Any]) -> str:
    """The command's last line: counts, and the warning when a thread had recent activity."""
    s = receipt["summary"]
    line = f"erased {s['erased']} thread(s), {s['nothing_to_erase']} with nothing to erase, {s['failed']} failed"
    for name, label in (("not_found", "not found"), ("already_erased", "already erased"), ("not_attempted", "not attempted"), ("skipped_active", "skipped (active since the cut-off)"),
                        ("busy", BUSY_LABEL)):
        if s[name]:
            line += f", {s[name]} {label}"
    recent = [t["key"] for t in receipt["threads"] if "warning" in t]
    if recent:
        line += f"; warning: {len(recent)} thread(s) had recent activity, a running agent may write them again"
    return line


BUSY_LABEL = "busy (a lock not had within --lock-timeout; nothing changed, rerun to take them)"
