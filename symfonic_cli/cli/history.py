"""``symfonic thread history`` and ``symfonic thread diff``: a thread's checkpoints, and what
changed between two of them. Both add commands to the ``thread`` group (``cli/thread.py``)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from symfonic_cli.cli.common import MAX_COUNT, check_format, environment
from symfonic_cli.vocabulary import RECORD_FORMATS
from symfonic_cli.cli.thread import app
from symfonic_cli.cli.options import (
    KeyArg,
    FormatOpt,
    RecordFormatOpt,
    SessionOpt,
    StoreOpt,
    SubTenantOpt,
    TenantOpt,
    ThreadOpt,
    with_key,
)
from symfonic_cli.errors import UsageError
from symfonic_cli.cli.common import one_thread
from symfonic_cli.environment import Environment

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

# Message content in text and table output is cut here (JSON is always complete).
CONTENT_WIDTH = 200


NamespaceOpt = Annotated[
    Optional[str],
    typer.Option("--namespace", help="Only this checkpoint namespace ('' is the root graph; subgraphs are 'node:task-id'). Default: all."),
]


@app.command("history")
def history(
    key: KeyArg = None,
    store: StoreOpt = None,
    thread: ThreadOpt = None,
    tenant: TenantOpt = None,
    sub_tenant: SubTenantOpt = None,
    session: SessionOpt = None,
    namespace: NamespaceOpt = None,
    limit: Annotated[Optional[int], typer.Option("--limit", "-n", min=0, help="At most N checkpoints (the newest).")] = None,
    fmt: RecordFormatOpt = None,
) -> None:
    """Every checkpoint of a thread, newest first: step, source, time, the writes that made it,
    its message count, and marks for a fork (a parent of several checkpoints) and a rewritten
    history (messages removed, reordered or edited)."""
    thread = with_key(key, thread)
    from symfonic_cli.cli.common import open_reading

    env = environment()
    out_format = check_format(fmt, env=env, formats=RECORD_FORMATS)
    key = one_thread(thread, tenant, sub_tenant, session)
    with open_reading(store, env) as st:
        # --limit has no upper bound here; the API's is more checkpoints than a thread holds.
        entries = st.history(key, namespace=namespace, limit=None if limit is None else min(limit, MAX_COUNT))
    _warn(entries.warnings, env)
    _write_history(entries, out_format, key, env)


@app.command("diff", context_settings={"ignore_unknown_options": True})
def diff(
    refs: Annotated[list[str], typer.Argument(metavar="[KEY] A B", show_default=False)],
    store: StoreOpt = None,
    thread: ThreadOpt = None,
    tenant: TenantOpt = None,
    sub_tenant: SubTenantOpt = None,
    session: SessionOpt = None,
    namespace: Annotated[
        Optional[str],
        typer.Option("--namespace", help="Namespace of -N forms and where ids are looked up (default: root for -N, any for ids)."),
    ] = None,
    fmt: FormatOpt = None,
) -> None:
    """What changed from checkpoint A to checkpoint B: channels added, removed and changed, and
    the messages added, removed and edited (same id, other content), by id.

    A and B are checkpoint ids (see thread history), or -1 for the latest checkpoint of the
    root namespace, -2 for the one before, and so on.
    """
    if len(refs) not in (2, 3):
        raise UsageError(f"expected [KEY] A B, got {len(refs)} argument(s)", hint="see 'symfonic thread diff --help'")
    if len(refs) == 2 and ":" in refs[0] and thread is None and tenant is None and session is None:
        # thread diff KEY -2: a key, then one checkpoint; not a thread left out.
        raise UsageError("thread diff: the second checkpoint is missing (KEY A B)",
                         hint="the last two checkpoints: symfonic thread diff KEY -2 -1")
    *given, a, b = refs
    if given and given[0].startswith("-"):  # unknown options reach here (ignore_unknown_options)
        raise UsageError(f"no such option: {given[0]}", hint="see 'symfonic thread diff --help'")
    thread = with_key(given[0] if given else None, thread)
    for ref in (a, b):
        if ref.startswith("-") and not (ref[1:].isdigit() and ref[1:].isascii()):
            raise UsageError(f"no such option: {ref}", hint="see 'symfonic thread diff --help'")
        if not ref:
            raise UsageError("a checkpoint id is empty")
    env = environment()
    out_format = check_format(fmt, env=env)
    key = one_thread(thread, tenant, sub_tenant, session)
    from symfonic_cli.cli.common import open_reading
    from symfonic_cli.render.writers import is_data

    with open_reading(store, env) as st:
        # The text and table show each message's role and content: read from its stored fields.
        result = st.diff(key, a, b, namespace=namespace, lean=not is_data(out_format))
    for w in result.warnings:
        _warn([w], env, raw=True)
    _write_diff(result, out_format, env)


def _warn(lines: Sequence[str], env: Environment, raw: bool = False) -> None:
    from symfonic_cli.render import escape_inline, warn

    if not lines:
        return
    text = lines[0] if raw else "not decoded (class not on the safe list, shown from its raw fields): " + ", ".join(lines)
    warn(env, escape_inline(text))


def _writes_cell(groups) -> str:
    from symfonic_cli.render import escape_inline

    return "; ".join(f"{escape_inline(g.label)}: {','.join(escape_inline(c) for c in g.channels)}" for g in groups)


TEXT_COLUMNS = ("checkpoint_id", "parent_checkpoint_id", "namespace", "step", "source", "ts", "messages", "marks", "writes",
                "pending_writes")


def _write_history(entries, out_format: str, key: str, env: Environment) -> None:
    from symfonic_cli import render

    if render.is_data(out_format):  # JSON, JSONL, CSV: the records as they are
        render.write_records((e.to_json() for e in entries), fmt=out_format, columns=(), environment=env)
        return
    out = env.stdout
    if out_format == "text":  # a row a checkpoint: the text writer's (its writes as one cell each)
        rows = ({"checkpoint_id": e.checkpoint_id, "parent_checkpoint_id": e.parent_checkpoint_id, "namespace": e.checkpoint_ns,
                 "step": e.step, "source": e.source, "ts": render.shown_time(e.ts, env), "messages": e.messages,
                 "marks": ",".join(e.marks) or None, "writes": _writes_cell(e.writes) or None,
                 "pending_writes": _writes_cell(e.pending_writes) or None} for e in entries)
        render.write_records(rows, fmt=out_format, columns=TEXT_COLUMNS, environment=env)
        return
    from symfonic_cli.render.fit import width_of

    width = width_of(out) or render.console(env, out).width
    if not _write_history_lines(entries, key, env, width):
        _write_history_stacked(entries, key, env)


def _write_pieces(e) -> list[str]:
    """The writes, pending writes and marks of a checkpoint as pieces that never break inside a
    name (``branch:to:model`` stays whole; a line breaks after ``model:`` or a comma)."""
    from symfonic_cli.render import escape_inline
    from symfonic_cli.render.fit import Whole

    pieces: list[str] = []

    def groups(found, lead: str = "") -> None:
        for n, g in enumerate(found):
            if lead and n == 0:
                pieces.append(Whole(lead))
            names = [escape_inline(c) for c in g.channels]
            pieces.append(Whole(escape_inline(g.label) + ":"))
            pieces.extend(Whole(c + ("," if i < len(names) - 1 else ";" if n < len(found) - 1 else "")) for i, c in enumerate(names))

    groups(e.writes)
    if not e.writes:
        pieces.append(Whole("-"))
    if e.pending_writes:
        pieces[-1] = Whole(pieces[-1] + ";")
    groups(e.pending_writes, "pending")
    pieces.extend(Whole(m.upper()) for m in e.marks)
    return pieces


# The writes column needs this much room at least (``branch:to:model``); less, and each checkpoint
# gets a few lines. Columns are _GAP cells apart (a space each side of the rule, shared).
_LEAST_WRITES = 15
_GAP = 2
_UNDER = "  "  # the writes under a checkpoint's id (fewer columns), indented


def _lines(pieces: list[str], room: int) -> int:
    from symfonic_cli.render.fit import fit

    return fit(pieces, room, hang="").count("\n") + 1


def _write_history_lines(entries, key: str, env: Environment, width: int) -> bool:
    """One line a checkpoint where it fits (issue #37): its id, its time (an age unless
    --absolute-time), step, source, messages, and the writes wrapped between names. The parent is
    said only where it is not the checkpoint on the next line (a fork, another namespace); with the
    room, every parent has a column. False when the whole ids and the least room for the writes do
    not fit: the caller stacks them."""
    from symfonic_cli import render
    from symfonic_cli.render.fit import fit

    rows = []
    for n, e in enumerate(entries):
        below = entries[n + 1] if n + 1 < len(entries) else None
        linear = e.parent_checkpoint_id is None or (below is not None and below.checkpoint_id == e.parent_checkpoint_id
                                                    and below.checkpoint_ns == e.checkpoint_ns)
        rows.append((e, render.escape_inline(e.checkpoint_id), render.cell(e.parent_checkpoint_id), linear,
                     render.cell(render.shown_age(e.ts, env)) if e.ts is not None else render.cell(None)))
    ids = max((render._text_width(r[1]) for r in rows), default=10)
    parents = max((render._text_width(r[2]) for r in rows), default=6)
    # Lines under an id: its namespace, and without a parent column a parent that is not the next line.
    under = max([0, *(3 + render._text_width(render.escape_inline(e.checkpoint_ns)) for e in entries if e.checkpoint_ns)])
    unlinked = max([0, *(7 + render._text_width(r[2]) for r in rows if not r[3])])
    times = max([4, *(render._text_width(r[4]) for r in rows)])
    steps = max([4, *(len(render.cell(e.step)) for e in entries)])
    sources = max([6, *(render._text_width(render.cell(e.source)) for e in entries)])
    both = max([4, *(len(f"{render.cell(e.step)} {render.cell(e.source)}") for e in entries)])
    msgs = max([4, *(len(render.cell(e.messages)) for e in entries)])
    pieces = [_write_pieces(e) for e in entries]
    natural = max([14, *(render._text_width(fit(p, None)) for p in pieces)])
    widest = max([1, *(render._text_width(w) for p in pieces for w in p)])
    # Layouts, most columns first: a parent column (every row on one line); step and source apart;
    # step and source in one column (room for a long channel name at 80 columns).
    layouts = []
    for parent_column, merged in ((True, False), (False, False), (False, True)):
        idw = max(ids, under, 0 if parent_column else unlinked)
        fixed = idw + times + msgs + (both if merged else steps + sources + _GAP) + _GAP * 4 + ((parents + _GAP) if parent_column else 0)
        room = min(natural, width - fixed)
        layouts.append((parent_column, merged, idw, room))
    fits = [x for x in layouts if x[3] >= (natural if x[0] else min(natural, widest))]
    fits = fits or [x for x in layouts if x[3] >= min(natural, _LEAST_WRITES)]
    # Fewer columns: the writes on lines of their own under the id, as wide as the id column can
    # be; taken where the writes column would break a name or take more lines (a narrow terminal).
    apart = width - (times + msgs + steps + sources + _GAP * 4) >= max(ids, under, unlinked, min(natural, widest) + len(_UNDER))
    rest = times + msgs + (steps + sources + _GAP if apart else both) + _GAP * 3
    below = width - rest - len(_UNDER)
    folded = None
    if width - rest >= max(ids, under, unlinked) and below >= min(natural, widest):
        id_lines = [1 + (not r[3]) + bool(e.checkpoint_ns) for r in rows for e in [r[0]]]
        folded_lines = sum(n + _lines(p, below) * (p != ["-"]) for n, p in zip(id_lines, pieces))
        if not fits or fits[0][3] < widest or folded_lines <= sum(
                max(n if not fits[0][0] else 1 + bool(e.checkpoint_ns), _lines(p, fits[0][3]))
                for n, p, e in zip(id_lines, pieces, entries)):
            folded = width - rest
    if folded is None and not fits:
        return False
    with_parent, merged, idw, room = (False, not apart, folded, below) if folded is not None else fits[0]
    from rich import box
    from rich.table import Table
    from rich.text import Text

    cells = []
    for (e, cid, parent, linear, when), found in zip(rows, pieces):
        first = cid
        if not with_parent and not linear:
            first += "\nparent " + parent
        if e.checkpoint_ns:
            first += "\nns " + render.escape_inline(e.checkpoint_ns)
        step = [f"{render.cell(e.step)} {render.cell(e.source)}"] if merged else [render.cell(e.step), render.cell(e.source)]
        writes = fit(found, room, hang="")
        if folded is not None:
            first += "" if found == ["-"] else "\n" + fit(found, idw, indent=_UNDER, hang="")
        cells.append([first, *([parent] if with_parent else []), when, *step, render.cell(e.messages),
                      *([] if folded is not None else [writes])])
    # A rule between checkpoints once one takes more than a line (a narrow terminal): each stays one block.
    ruled = any("\n" in c for row in cells for c in row)
    table = Table(title=Text(render.escape_inline(key)), box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, collapse_padding=True,
                  show_lines=ruled)
    table.add_column("checkpoint / writes / marks" if folded is not None else "checkpoint", no_wrap=True, min_width=idw)
    if with_parent:
        table.add_column("parent", no_wrap=True, min_width=parents)
    table.add_column("time", no_wrap=True, min_width=times)
    if merged:
        table.add_column("step", no_wrap=True)
    else:
        table.add_column("step", justify="right", no_wrap=True)
        table.add_column("source", no_wrap=True)
    table.add_column("msgs", justify="right", no_wrap=True)
    if folded is None:
        table.add_column("writes / marks", no_wrap=True, min_width=room, max_width=room)
    for row in cells:
        table.add_row(*(Text(c) for c in row))
    render.console(env).print(table)
    return True


def _write_history_stacked(entries, key: str, env: Environment) -> None:
    from symfonic_cli import render
    from rich import box
    from rich.table import Table
    from rich.text import Text

    # Ids and times never wrap (ids are copied into --checkpoint): the checkpoint, its parent and
    # its time share a column, one per line, so an 80-column terminal keeps each whole.
    table = Table(title=Text(render.escape_inline(key)), box=box.SIMPLE_HEAD, show_lines=True, pad_edge=False)
    table.add_column("checkpoint / parent / time", no_wrap=True, min_width=36)
    table.add_column("step", justify="right")
    table.add_column("source", overflow="fold")
    table.add_column("msgs", justify="right")
    table.add_column("writes / marks", overflow="fold")
    for e in entries:
        ids = render.escape_inline(e.checkpoint_id) + "\n" + render.cell(e.parent_checkpoint_id) + "\n" + render.cell(render.shown_time(e.ts, env))
        if e.checkpoint_ns:
            ids += "\nns " + render.escape_inline(e.checkpoint_ns)
        what = _writes_cell(e.writes) or "-"
        if e.pending_writes:
            what += "\npending " + _writes_cell(e.pending_writes)
        if e.marks:
            what += "\n" + " ".join(e.marks).upper()
        table.add_row(
            Text(ids),
            Text(render.cell(e.step)),
            Text(render.cell(e.source)),
            Text(render.cell(e.messages)),
            Text(what),
        )
    render.console(env).print(table)


def _short(text: str) -> str:
    from symfonic_cli.render import escape_inline

    text = text if len(text) <= CONTENT_WIDTH else text[:CONTENT_WIDTH] + "…"
    return escape_inline(text)


def _write_diff(d, out_format: str, env: Environment) -> None:
    from symfonic_cli import render

    if render.is_data(out_format):  # the diff as one document
        render.write_document(d.to_json(), out_format, env.stdout)
        return
    rows: list[tuple[str, str, str, str]] = []  # change, channel or message id, role, detail
    for ch in d.added:
        rows.append(("channel added", render.escape_inline(ch), "", ""))
    for ch in d.removed:
        rows.append(("channel removed", render.escape_inline(ch), "", ""))
    for ch in d.changed:
        rows.append(("channel changed", render.escape_inline(ch), "", ""))
    for m in d.messages_added:
        rows.append(("message added", render.cell(m.message_id), render.cell(m.role), _short(m.content)))
    for m in d.messages_removed:
        rows.append(("message removed", render.cell(m.message_id), render.cell(m.role), _short(m.content)))
    for m in d.messages_edited:
        detail = f"before: {_short(m.before_content or '')}\nafter: {_short(m.content)}"
        role = render.cell(m.role) if m.role == m.before_role else f"{render.cell(m.before_role)}->{render.cell(m.role)}"
        rows.append(("message edited", render.cell(m.message_id), role, detail))
    if out_format == "text":
        out = env.stdout
        out.write(f"from\t{render.escape_inline(d.a.checkpoint_id)}\t{render.escape_inline(d.a.checkpoint_ns)}\t{render.cell(render.shown_time(d.a.ts, env))}\n")
        out.write(f"to\t{render.escape_inline(d.b.checkpoint_id)}\t{render.escape_inline(d.b.checkpoint_ns)}\t{render.cell(render.shown_time(d.b.ts, env))}\n")
        out.write("change\tname\trole\tdetail\n")
        for change, name, role, detail in rows:
            out.write(f"{change}\t{name}\t{role or '-'}\t{detail.replace(chr(10), ' / ') or '-'}\n")
        return
    from rich import box
    from rich.table import Table
    from rich.text import Text

    # Each id with its time on a line of its own: both stay whole at 80 columns, in any --tz.
    title = Text(
        f"{render.escape_inline(d.a.checkpoint_id)}  {render.cell(render.shown_time(d.a.ts, env))}\n"
        f"-> {render.escape_inline(d.b.checkpoint_id)}  {render.cell(render.shown_time(d.b.ts, env))}"
    )
    # The channel or message id heads its own cell, the text under it wraps at spaces: at 80
    # columns the text has the width of the id, and no id or timestamp in it is cut.
    table = Table(title=title, box=box.SIMPLE_HEAD, show_lines=True, pad_edge=False)
    table.add_column("change", no_wrap=True)
    table.add_column("role", no_wrap=True)
    widest = max((render._text_width(name) for _, name, _, _ in rows), default=0)
    table.add_column("channel or message id / detail", overflow="fold", min_width=max(widest, 20))
    for change, name, role, detail in rows:
        table.add_row(Text(change), Text(role or "-"), Text(name + ("\n" + detail if detail else "")))
    render.console(env).print(table)
    if not rows:
        env.stdout.write("no differences\n")
