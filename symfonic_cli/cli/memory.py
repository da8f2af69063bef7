"""``transcript show --resume-window``: what a restart of the application recalls, rendered."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from symfonic_cli.errors import UsageError

T = TypeVar("T")


def show_resume_window(store: str | None, thread: list[str] | None, tenant: str | None, sub_tenant: str | None,
                       session: str | None, *, resume_window: bool, max_entries: int | None, fmt: str | None,
                       truncate: int | None, others: list[str]) -> None:
    from symfonic_cli.render import escape_inline, warn

    if not resume_window:
        raise UsageError("--max-entries needs --resume-window")
    sized = {} if max_entries is None else {"max_entries": max_entries}  # the API's default: symfonic-core's
    env, out_format, key, window = _read_one_thread(
        "--resume-window shows what a restart recalls", others, store, thread, tenant, sub_tenant, session, fmt,
        lambda st, key: st.resume_window(key, **sized))
    for warning in window.warnings:
        warn(env, escape_inline(warning))
    _write(window, out_format, key, truncate=truncate, env=env)
    if window.reason:
        env.stderr.write(f"symfonic: a restart recalls nothing for thread '{escape_inline(key)}': {escape_inline(window.reason)}\n")


def _write(rows: list[Any], out_format: str, key: str, *, truncate: int | None, env: Any) -> None:
    from symfonic_cli import render

    if render.is_data(out_format):  # json, jsonl, csv: the records' fields
        render.write_records((r.to_json() for r in rows), fmt=out_format, columns=(), environment=env)
        return

    def when(r: Any) -> str:
        return render.shown_time(r.timestamp, env) if r.timestamp is not None else render.cell(None)

    if out_format == "text":
        for r in rows:
            env.stdout.write(f"{r.speaker} {when(r)} {render.escape_inline(r.turn_id or '-')}\n"
                             f"{render.escape_controls(render.cut(r.content, truncate))}\n\n")
        return
    # Turn ids are in text and JSON: cut across a table's lines they could not be copied. Ages (or
    # --absolute-time's instants), as every table shows times: the content keeps the width.
    table = [[r.speaker, render.cell(render.shown_age(r.timestamp, env)), render.escape_controls(render.cut(r.content, truncate))]
             for r in rows]
    render.write_table(table, ("speaker", render.time_heading(env), "content"), whole=(True, True, False),
                       title=render.escape_inline(key) + " - a restart recalls", show_lines=True, environment=env)


def show_retained(store: str | None, thread: list[str] | None, tenant: str | None, sub_tenant: str | None,
                  session: str | None, *, fmt: str | None, truncate: int | None, others: list[str]) -> None:
    from symfonic_cli import render

    env, out_format, key, messages = _read_one_thread(
        "--retained shows every message the store holds", others, store, thread, tenant, sub_tenant, session, fmt,
        lambda st, key: st.retained(key))
    if render.is_data(out_format):
        render.write_records((m.to_json() for m in messages), fmt=out_format, columns=(), environment=env)
        return

    def when(t: Any, table: bool = False) -> str:
        if t is None:
            return render.cell(None)
        return render.cell(render.shown_age(t, env)) if table else render.shown_time(t, env)

    def held(m: Any, sep: str = " ", table: bool = False) -> str:
        if m.current:
            return "current"
        if m.pending:
            return "pending write"
        if m.removed_checkpoint is None:
            return "not current (a subgraph's)" if m.namespace else "not current"
        return f"removed by {m.removed_by}{sep}{when(m.removed_at, table)}"

    if out_format == "text":
        for m in messages:
            env.stdout.write(f"[{m.index}] {render.escape_inline(m.role)} {when(m.first_seen)} {held(m)}\n"
                             f"{render.escape_controls(render.cut(m.content, truncate))}\n\n")
        return
    # One narrow column for the role, the times (whole) and what holds it: the content keeps the width.
    table = [[str(m.index), "\n".join((render.escape_inline(m.role), when(m.first_seen, True), held(m, "\n", True))),
              render.escape_controls(render.cut(m.content, truncate))] for m in messages]
    render.write_table(table, ("#", "message", "content"), whole=(True, True, False),
                       title=render.escape_inline(key) + " - every message the store holds", show_lines=True, environment=env)


def _read_one_thread(view: str, others: list[str], store: str | None, thread: list[str] | None, tenant: str | None,
                     sub_tenant: str | None, session: str | None, fmt: str | None,
                     read: Callable[[Any, str], T]) -> tuple[Any, str, str, T]:
    """What both views do first: refuse the other view options, check the format, resolve the one
    thread and open the store read-only; then ``read(store, key)`` (the API's Store, which requires the thread)."""
    from symfonic_cli.cli.common import open_reading
    from symfonic_cli.cli.common import check_format, environment, one_thread
    from symfonic_cli.vocabulary import RECORD_FORMATS

    if others:
        raise UsageError(f"{view}; it does not take {', '.join(others)}")
    env = environment()
    out_format = check_format(fmt, env=env, formats=RECORD_FORMATS)  # what transcript show's --help lists
    key = one_thread(thread, tenant, sub_tenant, session)
    with open_reading(store, env) as st:
        return env, out_format, key, read(st, key)
