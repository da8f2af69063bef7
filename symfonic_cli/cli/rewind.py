"""``symfonic thread rewind``: continue a conversation from an earlier checkpoint (LangGraph's copy),
planned, confirmed, receipted. Adds its command to the ``thread`` group (``cli/thread.py``); runs
the driver the Python API runs (rewind/run.py) with the command line's Report, which renders its
events (cli/report.py, cli/rewind_text.py) and asks the typed confirmation on this terminal."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from symfonic_cli.cli.common import check_format, environment, store_options
from symfonic_cli.cli.options import (
    FormatOpt,
    KeyArg,
    LockTimeoutOpt,
    SessionOpt,
    StoreOpt,
    SubTenantOpt,
    TenantOpt,
    ThreadOpt,
    WaitOpt,
    with_key,
)
from symfonic_cli.cli.thread import app
from symfonic_cli.limits import DEFAULT_LOCK_TIMEOUT


@app.command("rewind")
def rewind(
    key: KeyArg = None,
    store: StoreOpt = None,
    thread: ThreadOpt = None,
    tenant: TenantOpt = None,
    sub_tenant: SubTenantOpt = None,
    session: SessionOpt = None,
    to: Annotated[Optional[str], typer.Option("--to", help="The checkpoint to go back to: its id, or -N (N checkpoints back on the root namespace, -1 the newest, as thread diff counts).")] = None,
    before_message: Annotated[Optional[int], typer.Option("--before-message", help="Go back to before transcript message INDEX (as transcript show numbers them): the newest checkpoint that does not hold it yet.")] = None,
    idle_for: Annotated[str, typer.Option("--idle-for", help="Refuse a thread written within this time (exit 14): the agent may be mid-run (default 5m; 0 allows it).")] = "5m",
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the plan and stop; nothing is written.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Rewind without a typed confirmation (required without a terminal).")] = False,
    receipt: Annotated[Optional[str], typer.Option("--receipt", help="Also append the receipt to this JSONL audit file (0600, fsync'd).")] = None,
    operator: Annotated[Optional[str], typer.Option("--operator", help="Who rewinds, for the receipt (default: the login name, else uid:N).")] = None,
    ticket: Annotated[Optional[str], typer.Option("--ticket", help="The request or ticket id, for the receipt.")] = None,
    fmt: FormatOpt = None,
    lock_timeout: LockTimeoutOpt = DEFAULT_LOCK_TIMEOUT,
    wait: WaitOpt = False,
) -> None:
    """Continue a conversation from an earlier checkpoint, as LangGraph's time travel does.

    Writes a copy of the checkpoint as the thread's newest (LangGraph's update_state with
    as_node="__copy__", through the store's own saver): the application's next run starts from
    there. Nothing is deleted: the branch left behind stays in the history, and a rewind to the
    old head (the plan prints the command) undoes it. On a terminal you confirm by typing the
    thread key; without one --yes is required (else exit 6, nothing written).
    """
    thread = with_key(key, thread)
    from symfonic_cli.cli.common import one_thread
    from symfonic_cli.cli.report import rendered
    from symfonic_cli.cli.report import TextReport
    from symfonic_cli.location import resolve_store
    from symfonic_cli.rewind.run import RewindRequest, idle_window, run

    env = environment()
    out_format = check_format(fmt)
    chosen = one_thread(thread, tenant, sub_tenant, session)
    location = resolve_store(store)
    request = RewindRequest(
        location=location, options={k: v for k, v in store_options(location, env).items() if k != "erase_extra"},
        key=chosen, to=to, before_message=before_message, idle_for=idle_window(idle_for), dry_run=dry_run, yes=yes,
        receipt_path=receipt, operator=_named(operator, "--operator"), ticket=_named(ticket, "--ticket"),
        lock_timeout=lock_timeout, wait=wait, selection={"thread": chosen},
    )
    rendered(lambda: run(request, env, TextReport(env, out_format)), out_format, env)


def _named(value: str | None, option: str) -> str | None:
    from symfonic_cli.errors import UsageError

    if value is not None and not value.strip():
        raise UsageError(f"{option} is empty")
    return value
