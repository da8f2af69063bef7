"""``symfonic transcript show``: a thread's conversation, as symfonic-core's get_transcript gives it."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from symfonic_cli.cli.common import MAX_COUNT, check_format, environment
from symfonic_cli.vocabulary import RECORD_FORMATS
from symfonic_cli.cli.options import (
    KeyArg,
    RecordFormatOpt,
    SessionOpt,
    StoreOpt,
    SubTenantOpt,
    TenantOpt,
    ThreadOpt,
    with_key,
)
from symfonic_cli.errors import UsageError
from symfonic_cli.vocabulary import GROUP_HELP, ROLES, SPEAKERS, one_of
from symfonic_cli.cli.common import one_thread
from symfonic_cli.environment import Environment

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.api.store import Store


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="transcript")


app = typer.Typer(help=GROUP_HELP["transcript"], no_args_is_help=True)


@app.command("show")
def show(
    key: KeyArg = None,
    store: StoreOpt = None,
    thread: ThreadOpt = None,
    tenant: TenantOpt = None,
    sub_tenant: SubTenantOpt = None,
    session: SessionOpt = None,
    speaker: Annotated[str, typer.Option("--speaker", help=f"{one_of(SPEAKERS)}, or a comma list ({','.join(ROLES[:2])}).")] = "all",
    index: Annotated[Optional[int], typer.Option("--index", "-i", min=-MAX_COUNT, max=MAX_COUNT, help="Row N of the speaker-filtered view; negative counts from the end; out of range prints nothing.")] = None,
    since: Annotated[Optional[str], typer.Option("--since", help="Keep rows at or after this time: 90s, 15m, 2h, 3d (ago), a date (its start) or an ISO 8601 time; no offset means --tz.")] = None,
    until: Annotated[Optional[str], typer.Option("--until", help="Keep rows at or before this time: 15m (ago), a date (its end), 08:24 (the whole minute) or an ISO 8601 time; no offset means --tz.")] = None,
    truncate: Annotated[Optional[int], typer.Option("--truncate", "--max-width", min=1, max=MAX_COUNT, help="In table and text, cut each message's content after N characters, saying how many were cut (JSON keeps it whole).")] = None,
    limit: Annotated[Optional[int], typer.Option("--limit", "-n", min=0, max=MAX_COUNT, help="At most N rows, applied last (0 to 1000000000).")] = None,
    tail: Annotated[Optional[int], typer.Option("--tail", min=0, max=MAX_COUNT, help="The last N rows of the view (after --speaker and --since/--until): the end of a conversation.")] = None,
    around: Annotated[Optional[int], typer.Option("--around", min=-MAX_COUNT, max=MAX_COUNT, help="Row I of the view with --context rows either side (a threads search hit's index; negative counts from the end).")] = None,
    context: Annotated[int, typer.Option("--context", "-C", min=0, max=MAX_COUNT, help="Rows either side of --around (default 3).")] = 3,
    checkpoint: Annotated[Optional[str], typer.Option("--checkpoint", help="Show the transcript as of this root-namespace checkpoint id.")] = None,
    fmt: RecordFormatOpt = None,
    tools: Annotated[bool, typer.Option("--tools", help="Show tool calls (name, call id, arguments) and which tool answered.")] = False,
    resume_window: Annotated[bool, typer.Option("--resume-window", help="Only the turns symfonic-core's restart-resume recalls: the rows it replays into a fresh working memory (speaker, turn id, content).")] = False,
    max_entries: Annotated[Optional[int], typer.Option("--max-entries", min=0, max=MAX_COUNT, help="With --resume-window: the working memory's size (symfonic-core's max_entries; default 10).")] = None,
    retained: Annotated[bool, typer.Option("--retained", help="Every message any checkpoint of the thread still holds, those compaction removed included: whether the current state has it, when and by what it was removed.")] = False,
) -> None:
    """Print a thread's transcript by ordinal (--index) or time range (--since/--until)."""
    thread = with_key(key, thread)
    from symfonic_cli.api.store import parse_speakers

    # The memory views are whole: the transcript's view options are refused with them, not ignored.
    view_options = {"--speaker": speaker != "all", "--index": index is not None, "--since": since is not None,
                    "--until": until is not None, "--checkpoint": checkpoint is not None, "--tools": tools,
                    "--limit": limit is not None, "--tail": tail is not None, "--around": around is not None}
    if retained:
        from symfonic_cli.cli.memory import show_retained

        given = {**view_options, "--resume-window": resume_window or max_entries is not None}
        show_retained(store, thread, tenant, sub_tenant, session, fmt=fmt, truncate=truncate, others=[f for f, on in given.items() if on])
        return
    if resume_window or max_entries is not None:
        from symfonic_cli.cli.memory import show_resume_window

        show_resume_window(store, thread, tenant, sub_tenant, session, resume_window=resume_window, max_entries=max_entries,
                           fmt=fmt, truncate=truncate, others=[flag for flag, on in view_options.items() if on])
        return

    parse_speakers(speaker, option="--speaker")
    if index is not None and (since is not None or until is not None):
        raise UsageError("--index and --since/--until are mutually exclusive, as in get_transcript")
    picked = [name for name, value in (("--index", index), ("--tail", tail), ("--around", around)) if value is not None]
    if len(picked) > 1:
        raise UsageError(f"{picked[0]} and {picked[1]} are mutually exclusive", hint="give one way of choosing rows")
    env = environment()
    zone = env.zone()  # --tz, a root option
    lo = _bound("--since", since, zone, until=False)
    hi = _bound("--until", until, zone, until=True)
    out_format = check_format(fmt, env=env, formats=RECORD_FORMATS)
    key = one_thread(thread, tenant, sub_tenant, session)

    from symfonic_cli.cli.common import open_reading
    from symfonic_cli.render import is_terminal

    with open_reading(store, env) as st:
        windowed = tail is not None or around is not None
        # Each row carries not_read_by_application (the application reads none of them: why).
        result = st.transcript(key, checkpoint=checkpoint, speaker=speaker, index=index, since=lo, until=hi,
                               limit=None if windowed else limit, tools=tools)
        rows = _window(result, tail=tail, around=around, context=context, limit=limit) if windowed else list(result)
        # An index past the end says so wherever stderr goes (the answer stays empty, exit 0, as
        # symfonic-core's get_transcript gives []); any other empty answer on a terminal only.
        past_end = index is not None and not rows and speaker == "all" and not tools
        empty_note = _empty_note(st, key, checkpoint, env, index=index if past_end else None) \
            if not rows and (past_end or is_terminal(env.stderr)) else None
        unread = rows[0].not_read_by_application if rows else None
    from symfonic_cli.render import escape_inline, is_data, warn

    for warning in result.warnings:
        warn(env, escape_inline(warning))
    if unread and not is_data(out_format):  # a program's format: each record says it (not_read_by_application)
        env.stderr.write(f"symfonic: note: the application itself reads none of these messages: {escape_inline(unread)}\n")
    _write(rows, out_format, key, tools, truncate=truncate, env=env)
    if empty_note:
        env.stderr.write(empty_note + "\n")


def _window(rows: list, *, tail: Optional[int], around: Optional[int], context: int, limit: Optional[int]) -> list:
    """--tail N: the last N rows; --around I --context K: rows I-K..I+K, I counted in the view
    (--speaker's, as --index counts; a negative I from its end); then --limit."""
    if tail is not None:
        rows = rows[max(len(rows) - tail, 0):]
    elif around is not None:
        total = max((r.index for r in rows), default=-1) + 1
        centre = around + total if around < 0 else around
        rows = [r for r in rows if centre - context <= r.index <= centre + context]
    return rows if limit is None else rows[:limit]



def _empty_note(st: Store, key: str, checkpoint: Optional[str], env: Environment, *, index: Optional[int] = None) -> str:
    """An empty answer says so, and what the thread does hold (``index``: the one asked for, past the end)."""
    from symfonic_cli.render import escape_inline, shown_time

    every = st.transcript(key, checkpoint=checkpoint)
    stamps = [r.timestamp for r in every if r.timestamp is not None]
    if not every:
        return f"symfonic: no rows: thread '{escape_inline(key)}' holds no messages"
    if index is not None:
        n = len(every)
        return f"symfonic: no message at index {index}: the thread has {n} messages (--index 0 to {n - 1}, or -{n} to -1)"
    span = f" between {shown_time(min(stamps), env)} and {shown_time(max(stamps), env)}" if stamps else ""
    return f"symfonic: no rows match; the thread has {len(every)} rows{span}"


def _bound(flag: str, value: Optional[str], zone, *, until: bool):
    if value is None:
        return None
    from symfonic_cli.clock import time_option

    return time_option(flag, value, until=until, tz=zone)


def _shown_time(ts, env: Environment) -> str:
    from symfonic_cli import render

    return render.shown_time(ts, env) if ts is not None else render.cell(ts)


def _shown_content(r) -> str:
    """A message's content, or what an assistant message that only calls tools does: ``(calls
    lookup)``, not an empty row (tables and text; JSON keeps the content as stored)."""
    if r.content or not r.calls:
        return r.content
    return "(calls " + ", ".join(r.calls) + ")"


def _write(rows, out_format: str, key: str, tools: bool = False, *, truncate: Optional[int] = None, env: Environment) -> None:
    from symfonic_cli import render

    out = env.stdout
    if render.is_data(out_format):  # JSON, JSONL, CSV: the records as they are (with not_read_by_application)
        render.write_records((r.to_json(tools) for r in rows), fmt=out_format, columns=(), environment=env)
        return
    if out_format == "text":
        for r in rows:
            extra = "".join(render.escape_controls(line) + "\n" for line in render.tool_lines(r)) if tools else ""
            out.write(f"[{r.index}] {render.escape_inline(r.role)} {_shown_time(r.timestamp, env)}\n{render.escape_controls(render.cut(_shown_content(r), truncate))}\n{extra}\n")
        return
    rows_out = [
        [
            str(r.index),
            render.escape_inline(r.role),
            render.cell(render.shown_age(r.timestamp, env)),  # an age (or --absolute-time): room for the text
            render.escape_controls("\n".join([render.cut(_shown_content(r), truncate), *(render.tool_lines(r) if tools else [])]).strip("\n") if tools else render.cut(_shown_content(r), truncate)),
        ]
        for r in rows
    ]
    render.write_table(rows_out, ("#", "role", render.time_heading(env), "content"), whole=(True, False, True, False),
                       title=render.escape_inline(key), show_lines=True, environment=env)
