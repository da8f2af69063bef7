"""``symfonic thread erase``: GDPR erasure of conversations, planned, confirmed, verified, receipted.
Adds its command to the ``thread`` group (``cli/thread.py``)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from symfonic_cli.cli.common import check_format, environment, store_options
from symfonic_cli.cli.options import (
    KeyArg,
    AllSessionsOpt,
    BatchSizeOpt,
    LockTimeoutOpt,
    MaxDurationOpt,
    MaxRateOpt,
    JobsOpt,
    MaxReplicaLagOpt,
    PauseOpt,
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
    EraseWaitOpt,
    erase_selection,
    max_duration_of,
    pace_of,
    with_key,
)
from symfonic_cli.cli.thread import app
from symfonic_cli.errors import UsageError
from symfonic_cli.limits import DEFAULT_LOCK_TIMEOUT

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:

    pass


@app.command("erase")
def erase(
    key: KeyArg = None,
    store: StoreOpt = None,
    thread: ThreadsOpt = None,
    tenant: TenantOpt = None,
    sub_tenant: SubTenantOpt = None,
    session: SessionOpt = None,
    all_sessions: AllSessionsOpt = False,
    from_file: KeyFileOpt = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the plan and stop; nothing is deleted.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Erase without a typed confirmation (required without a terminal).")] = False,
    vacuum: Annotated[bool, typer.Option("--vacuum", help="Afterwards rewrite the file (SQLite) / VACUUM the tables (PostgreSQL).")] = False,
    grace: Annotated[str, typer.Option("--grace", help="Warn about threads active within this time (90s, 15m, 2h, 1d).")] = "15m",
    receipt: Annotated[Optional[str], typer.Option("--receipt", help="Also append the receipt to this JSONL audit file (0600, a line per thread, fsync'd).")] = None,
    operator: Annotated[Optional[str], typer.Option("--operator", help="Who erases, for the receipt (default: the login name, else uid:N).")] = None,
    ticket: Annotated[Optional[str], typer.Option("--ticket", help="The request or ticket id, for the receipt.")] = None,
    missing_ok: MissingOkOpt = False,
    fmt: FormatOpt = None,
    inactive_for: InactiveForOpt = None,
    inactive_since: InactiveSinceOpt = None,
    batch_size: BatchSizeOpt = None,
    lock_timeout: LockTimeoutOpt = DEFAULT_LOCK_TIMEOUT,
    wait: EraseWaitOpt = False,
    max_duration: MaxDurationOpt = None,
    pause: PauseOpt = None,
    max_rate: MaxRateOpt = None,
    max_replica_lag: MaxReplicaLagOpt = None,
    jobs: JobsOpt = 1,
) -> None:
    """Erase threads (every checkpoint, namespace and write, plus declared extra tables), one transaction per thread.

    The plan comes first; on a terminal you confirm by typing the thread key (or the number of
    threads of a batch); without a terminal --yes is required (else exit 6, nothing deleted).
    A requested key that names no thread is not-found (exit 3, with suggestions).
    """
    thread = with_key(key, thread)
    from symfonic_cli.cli.report import TextReport, rendered
    from symfonic_cli.erase.run import EraseRequest, run
    from symfonic_cli.location import resolve_store

    env = environment()
    # A retention sweep's cut-off is fixed in the selection, once; erase re-checks each thread against it.
    chosen = erase_selection(
        env, thread=thread, tenant=tenant, sub_tenant=sub_tenant, session=session, all_sessions=all_sessions,
        from_file=from_file, inactive_for=inactive_for, inactive_since=inactive_since, batch_size=batch_size,
        store=store, missing_ok=missing_ok,
    )
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
        grace=_grace(grace),
        receipt_path=receipt,
        operator=operator,
        ticket=ticket,
        missing_ok=missing_ok,
        batch_size=batch_size,
        lock_timeout=lock_timeout,
        wait=wait,
        max_duration=max_duration_of(max_duration),
        pace=pace_of(pause, max_rate, max_replica_lag),
        jobs=jobs,
    )
    # The plan, the typed confirmation on this terminal, each thread: rendered as the run tells them.
    rendered(lambda: run(request, env, TextReport(env, out_format)), out_format, env)


def _grace(text):
    from symfonic_cli.clock import parse_duration  # here: TAB and --help load this module

    return parse_duration(text, option="--grace", bare_unit="m")
