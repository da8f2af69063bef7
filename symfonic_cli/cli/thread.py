"""The ``thread`` group, and ``symfonic thread show``: one thread's run state (status, next nodes,
interrupts, errors).

The group's other commands add themselves to ``app`` here: ``history.py`` (history, diff),
``export.py``, ``erase.py`` and ``prune.py`` (``groups.GROUP_EXTENSIONS`` names them).
"""

from __future__ import annotations

import typer

from symfonic_cli.cli.common import check_format, environment
from symfonic_cli.cli.options import (
    KeyArg,
    FormatOpt,
    SessionOpt,
    StoreOpt,
    SubTenantOpt,
    TenantOpt,
    ThreadOpt,
    with_key,
)
from symfonic_cli.cli.common import one_thread
from symfonic_cli.vocabulary import GROUP_HELP, STATUSES, one_of
from symfonic_cli.environment import Environment

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

app = typer.Typer(help=GROUP_HELP["thread"], no_args_is_help=True)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="thread")


@app.command("show", help=f"A thread's run state: {one_of(STATUSES)}; the nodes due next; what it waits on.")
def show(
    key: KeyArg = None,
    store: StoreOpt = None,
    thread: ThreadOpt = None,
    tenant: TenantOpt = None,
    sub_tenant: SubTenantOpt = None,
    session: SessionOpt = None,
    fmt: FormatOpt = None,
) -> None:
    thread = with_key(key, thread)
    from symfonic_cli.cli.common import open_reading
    from symfonic_cli.render import escape_inline, warn

    env = environment()
    out_format = check_format(fmt, env=env)
    key = one_thread(thread, tenant, sub_tenant, session)
    with open_reading(store, env) as st:
        state = st.thread_state(key)
    for warning in state.warnings:
        warn(env, escape_inline(warning))
    _write(state.json_view(), state.created, out_format, env)


def _write(full: dict, created: Any, out_format: str, env: Environment) -> None:
    """``full``: the command's JSON document (``namespaces``: each namespace's run state);
    ``created``: the text's (the document has none)."""
    from symfonic_cli import render

    out = env.stdout
    record, namespaces = full, full["namespaces"]
    if render.is_data(out_format):
        render.write_document(full, out_format, out)
        return
    pairs = [
        ("key", record["key"]),
        ("status", record["status"]),
        ("next", ", ".join(record["next"]) or "-"),
    ]
    for i, itr in enumerate(record["interrupts"]):
        pairs.append((f"interrupt {i + 1}", f"{itr['node']} id={itr['id']} value={_compact(itr['value'])}"))
    for i, err in enumerate(record["errors"]):
        pairs.append((f"error {i + 1}", f"{err['node']}: {err['error']}"))
    pairs += [
        ("checkpoint id", record["checkpoint_id"]),
        ("step", record["step"]),
        ("source", record["source"]),
        *([("rewound", f"at {record['rewound']['at']}, to a copy of {record['rewound']['copy_of'] or 'an unknown checkpoint'}")]
          if record.get("rewound") else []),
        ("created", created),
        ("checkpoints", record["checkpoints"]),
        ("namespaces", len(namespaces)),
    ]
    for ns in namespaces:
        if ns["namespace"] == "":
            continue
        waits = "; ".join(f"{i['node']}: {_compact(i['value'])}" for i in ns["interrupts"])
        pairs.append((f"  {ns['namespace']}", f"{ns['status']} next={', '.join(ns['next']) or '-'}" + (f" waits on {waits}" if waits else "")))
    pairs += [
        ("messages", record["messages"]),
        ("restart recalls", _recalls(record["restart_recalls"], env)),
        ("size", render.human_size(record["size_bytes"])),
        ("first activity", record["first_activity"]),
        ("last activity", record["last_activity"]),
    ]
    render.write_pairs(pairs, fmt=out_format, title=record["key"], environment=env)


def _compact(value: Any) -> str:
    from symfonic_cli import render

    return value if isinstance(value, str) else render.json_dumps(value)


def _recalls(recalls: dict[str, Any], env: Environment) -> str:
    """``N turns, the last at T``, or ``nothing (why)``."""
    from symfonic_cli import render

    n = recalls["turns"]
    if not n:
        return f"nothing ({recalls['reason']})"
    last = render.shown_time(recalls["last_at"], env) if recalls["last_at"] else "an unknown time"
    return f"{n} turn{'s' if n != 1 else ''}, the last at {last}"
