"""``symfonic thread prune``: old checkpoints removed, planned, confirmed, verified, receipted.
Adds its command to the ``thread`` group (``cli/thread.py``)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from symfonic_cli.cli.common import MAX_COUNT, check_format, environment, store_options
from symfonic_cli.cli.thread import app
from symfonic_cli.cli.options import (
    KeyArg,
    AllSessionsOpt,
    BatchSizeOpt,
    LockTimeoutOpt,
    MaxDurationOpt,
    MaxRateOpt,
    MaxReplicaLagOpt,
    PauseOpt,
    PieceSizeOpt,
    FormatOpt,
    InactiveForOpt,
    InactiveSinceOpt,
    KeyFileOpt,
    MissingOkOpt,
    SessionOpt,
    StoreOpt,
    SubTenantOpt,
    TenantOpt,
    ThreadsOpt,
    WaitOpt,
    with_key,
    erase_selection,
    max_duration_of,
    pace_of,
)
from symfonic_cli.errors import UsageError
from symfonic_cli.limits import DEFAULT_LOCK_TIMEOUT, DEFAULT_PIECE


@app.command("prune")
def prune(
    key: KeyArg = None,
    store: StoreOpt = None,
    thread: ThreadsOpt = None,
    tenant: TenantOpt = None,
    sub_tenant: SubTenantOpt = None,
    session: SessionOpt = None,
    all_sessions: AllSessionsOpt = False,
    from_file: KeyFileOpt = None,
    all_threads: Annotated[bool, typer.Option("--all", help="Every thread of the store.")] = False,
    keep: Annotated[int, typer.Option("--keep", min=1, max=MAX_COUNT, help="Keep the latest N checkpoints of every namespace (default 1).")] = 1,
    older_than: Annotated[Optional[str], typer.Option("--older-than", help="Also keep every checkpoint newer than this (90d, 12h, 2w): prune only what is older.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the plan, make every check, and stop; nothing is deleted.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Prune without a typed confirmation (required without a terminal).")] = False,
    compact: Annotated[bool, typer.Option("--compact", help="Afterwards give the space back: SQLite VACUUM, PostgreSQL VACUUM (ANALYZE), MongoDB compact.")] = False,
    receipt: Annotated[Optional[str], typer.Option("--receipt", help="Also append the receipt to this JSONL audit file (0600, a line per thread, fsync'd).")] = None,
    operator: Annotated[Optional[str], typer.Option("--operator", help="Who prunes, for the receipt (default: the login name, else uid:N).")] = None,
    ticket: Annotated[Optional[str], typer.Option("--ticket", help="The request or ticket id, for the receipt.")] = None,
    missing_ok: MissingOkOpt = False,
    fmt: FormatOpt = None,
    inactive_for: InactiveForOpt = None,
    inactive_since: InactiveSinceOpt = None,
    batch_size: BatchSizeOpt = None,
    lock_timeout: LockTimeoutOpt = DEFAULT_LOCK_TIMEOUT,
    wait: WaitOpt = False,
    max_duration: MaxDurationOpt = None,
    pause: PauseOpt = None,
    max_rate: MaxRateOpt = None,
    max_replica_lag: MaxReplicaLagOpt = None,
    keep_branches: Annotated[bool, typer.Option("--keep-branches", help="Also keep the head of every branch of a forked thread (LangGraph time travel): a checkpoint no other checkpoint names as parent.")] = False,
    piece_size: PieceSizeOpt = DEFAULT_PIECE,
) -> None:
    """Delete old checkpoints (with their writes, and the blobs no kept checkpoint uses), keeping the
    latest N of every namespace: exactly what LangGraph's PostgresSaver.prune keeps with --keep 1.

    The plan comes first; on a terminal you confirm by typing the number of threads; without a
    terminal --yes is required (else exit 6, nothing deleted). One transaction per thread, verified;
    a thread with more than --piece-size checkpoints to delete in several, oldest first.
    """
    thread = with_key(key, thread)
    from symfonic_cli.cli.report import TextReport
    from symfonic_cli.location import resolve_store
    from symfonic_cli.retention.window import parse_age
    from symfonic_cli.selection import PRUNE
    from symfonic_cli.prune.run import PruneRequest, run

    env = environment()
    chosen = erase_selection(
        env, command=PRUNE, thread=thread, tenant=tenant, sub_tenant=sub_tenant, session=session, all_sessions=all_sessions,
        from_file=from_file, all_threads=all_threads, inactive_for=inactive_for, inactive_since=inactive_since,
        batch_size=batch_size, store=store, missing_ok=missing_ok, listed_only=True,
    )
    if operator is not None and not operator.strip():
        raise UsageError("--operator is empty")
    if ticket is not None and not ticket:
        raise UsageError("--ticket is empty")
    out_format = check_format(fmt)
    age = parse_age("--older-than", older_than) if older_than is not None else None
    location = resolve_store(store)
    from symfonic_cli.cli.erase import rendered

    rendered(lambda: run(PruneRequest(
        location=location,
        options={k: v for k, v in store_options(location, env).items() if k != "erase_extra"},
        selection=chosen, keep=keep, older_than=age, dry_run=dry_run, yes=yes, compact=compact,
        receipt_path=receipt, operator=operator, ticket=ticket, missing_ok=missing_ok, batch_size=batch_size,
        lock_timeout=lock_timeout, wait=wait, keep_branches=keep_branches, piece_size=piece_size,
        max_duration=max_duration_of(max_duration),
        pace=pace_of(pause, max_rate, max_replica_lag),
    ), env, TextReport(env, out_format)), out_format, env)  # the plan, the typed confirmation on this terminal, each thread
