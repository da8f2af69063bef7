"""``symfonic thread erase``: GDPR erasure of conversations, planned, confirmed, verified, receipted."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from symfonic_cli.cli.common import check_format, environment, store_options
from symfonic_cli.cli.options import (
    BatchSizeOpt,
    FormatOpt,
    SessionOpt,
    StoreOpt,
    SubTenantOpt,
    TenantOpt,
    ThreadOpt,
)
from symfonic_cli.errors import UsageError
from symfonic_cli.inputs import parse_duration

app = typer.Typer(help="Work on threads: run state, history, diff, export, erase.", no_args_is_help=True)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="thread")


@app.command("erase")
def erase(
    store: StoreOpt = None,
    thread: ThreadOpt = None,
    tenant: TenantOpt = None,
    sub_tenant: SubTenantOpt = None,
    session: SessionOpt = None,
    all_sessions: Annotated[bool, typer.Option("--all-sessions", help="Every thread of --tenant (or of --tenant --sub-tenant).")] = False,
    from_file: Annotated[Optional[str], typer.Option("--from-file", help="A batch: one exact thread key per line, or threads list -f json/jsonl output ('-' for stdin).")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the plan and stop; nothing is deleted.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Erase without a typed confirmation (required without a terminal).")] = False,
    vacuum: Annotated[bool, typer.Option("--vacuum", help="Afterwards rewrite the file (SQLite) / VACUUM the tables (PostgreSQL).")] = False,
    grace: Annotated[str, typer.Option("--grace", help="Warn about threads active within this time (90s, 15m, 2h, 1d).")] = "15m",
    receipt: Annotated[Optional[str], typer.Option("--receipt", help="Also append the receipt to this JSONL audit file (0600, a line per thread, fsync'd).")] = None,
    operator: Annotated[Optional[str], typer.Option("--operator", help="Who erases, for the receipt (default: the login name, else uid:N).")] = None,
    ticket: Annotated[Optional[str], typer.Option("--ticket", help="The request or ticket id, for the receipt.")] = None,
    missing_ok: Annotated[bool, typer.Option("--missing-ok", help="A requested key that names no thread (or a selection that matches none) exits 0, not 3.")] = False,
    fmt: FormatOpt = None,
    inactive_for: Annotated[Optional[str], typer.Option("--inactive-for", help="A retention sweep: every thread (of --tenant [--sub-tenant]) whose last activity is older than this (90d, 12h, 2w).")] = None,
    inactive_since: Annotated[Optional[str], typer.Option("--inactive-since", help="A retention sweep: every thread with no activity since this ISO 8601 date or time.")] = None,
    batch_size: BatchSizeOpt = None,
) -> int:
    """Erase threads (every checkpoint, namespace and write, plus declared extra tables), one transaction per thread.

    The plan comes first; on a terminal you confirm by typing the thread key (or the number of
    threads of a batch); without a terminal --yes is required (else exit 6, nothing deleted).
    A requested key that names no thread is not-found (exit 3, with suggestions).
    """
    from symfonic_cli.erase.run import EraseRequest, run
    from symfonic_cli.location import resolve_store
    from symfonic_cli.selection import ERASE, build_selection

    env = environment()
    # A retention sweep's cut-off is fixed in the selection, once; erase re-checks each thread against it.
    chosen = build_selection(
        ERASE, threads=thread, tenant=tenant, sub_tenant=sub_tenant, session=session, all_sessions=all_sessions,
        from_file=from_file, inactive_for=inactive_for, inactive_since=inactive_since, environment=env,
    )
    if batch_size is not None and chosen.window is None:
        raise UsageError("--batch-size goes with a retention sweep (--inactive-for/--inactive-since)")
    if operator is not None and not operator.strip():
        raise UsageError("--operator is empty")
    if ticket is not None and not ticket:
        raise UsageError("--ticket is empty")
    out_format = check_format(fmt)
    location = resolve_store(store)
    request = EraseRequest(
        location=location,
        options={k: v for k, v in store_options(location, env).items() if k != "erase_extra"},
        selection=chosen,
        dry_run=dry_run,
        yes=yes,
        vacuum=vacuum,
        grace=parse_duration(grace),
        receipt_path=receipt,
        fmt=out_format,
        operator=operator,
        ticket=ticket,
        missing_ok=missing_ok,
        batch_size=batch_size,
    )
    run(request, env)
