"""``symfonic thread export``: a bundle of threads' transcripts and a manifest (GDPR access and
portability). Adds its command to the ``thread`` group (``cli/erase.py``)."""

from __future__ import annotations

import os
from typing import Annotated, Optional

import typer

from symfonic_cli.cli.common import check_format, environment, store_options, thread_key
from symfonic_cli.cli.erase import app
from symfonic_cli.cli.options import (
    FormatOpt,
    SessionOpt,
    StoreOpt,
    SubTenantOpt,
    TenantOpt,
    ThreadOpt,
)
from symfonic_cli.errors import UsageError


def register(root: typer.Typer) -> None:
    """The command is on ``app`` once this module is imported; the group is added by erase.py."""


@app.command("export")
def export(
    store: StoreOpt = None,
    thread: ThreadOpt = None,
    tenant: TenantOpt = None,
    sub_tenant: SubTenantOpt = None,
    session: SessionOpt = None,
    all_sessions: Annotated[bool, typer.Option("--all-sessions", help="Every thread of --tenant (or of --tenant --sub-tenant).")] = False,
    from_file: Annotated[Optional[str], typer.Option("--from-file", help="A batch: one exact thread key per line, or threads list -f json/jsonl output ('-' for stdin).")] = None,
    output: Annotated[Optional[str], typer.Option("--output", "-o", help="The bundle: a directory, or a .zip / .tar.gz file when the name ends so.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing bundle at --output.")] = False,
    tools: Annotated[bool, typer.Option("--tools", help="Add the tool-call fields to each transcript row (as transcript show --tools).")] = False,
    with_state: Annotated[bool, typer.Option("--with-state", help="Add each thread's latest checkpoint channels as state/<name>.json.")] = False,
    missing_ok: Annotated[bool, typer.Option("--missing-ok", help="A requested key that names no thread (or a selection that matches none) exits 0, not 3.")] = False,
    fmt: FormatOpt = None,
    inactive_for: Annotated[Optional[str], typer.Option("--inactive-for", help="Every thread (of --tenant [--sub-tenant]) whose last activity is older than this (90d, 12h, 2w).")] = None,
    inactive_since: Annotated[Optional[str], typer.Option("--inactive-since", help="Every thread with no activity since this ISO 8601 date or time.")] = None,
) -> None:
    """Export threads' transcripts to a bundle with a manifest (read-only; never overwrites without --force).

    Each thread becomes transcript/<safe name>.json, exactly what transcript show --format json
    prints; manifest.json maps the file names back to the keys, with row counts, activity and
    SHA-256 of each file. A requested key that names no thread is not-found (exit 3, nothing written).
    """
    from symfonic_cli.export.run import ExportRequest, run
    from symfonic_cli.location import resolve_store
    from symfonic_cli.threadkey import tenant_prefix

    if output is None:
        raise UsageError("where to? pass --output PATH (a directory, or a .zip / .tar.gz file)")
    keys: list[str] | None = None
    prefix: str | None = None
    window = None
    # The same selections as thread erase (cli/erase.py).
    if inactive_for is not None or inactive_since is not None:
        from symfonic_cli.retention.window import window as activity_window

        if thread is not None or session is not None or from_file is not None or all_sessions:
            raise UsageError("--inactive-for/--inactive-since go with --tenant [--sub-tenant] only")
        if sub_tenant is not None and tenant is None:
            raise UsageError("--sub-tenant needs --tenant")
        window = activity_window(inactive_for=inactive_for, inactive_since=inactive_since, active_within=None)
        selection = {
            **({"inactive_for": inactive_for} if inactive_for is not None else {"inactive_since": inactive_since}),
            "tenant": tenant, "sub_tenant": sub_tenant, "cut_off": window.describe()["inactive_before"],
        }
    elif all_sessions:
        if thread is not None or session is not None or from_file is not None:
            raise UsageError("--all-sessions goes with --tenant [--sub-tenant] only")
        if not tenant:
            raise UsageError("--all-sessions needs --tenant")
        prefix = tenant_prefix(tenant, sub_tenant)
        selection = {"tenant": tenant, "sub_tenant": sub_tenant, "all_sessions": True}
    elif from_file is not None:
        if any(v is not None for v in (thread, tenant, sub_tenant, session)):
            raise UsageError("--from-file goes alone, without --thread/--tenant/--session")
        from symfonic_cli.inputs import read_key_file

        keys = read_key_file(from_file, environment=environment())
        if not keys:
            raise UsageError(f"--from-file {from_file} holds no thread key")
        selection = {"from_file": from_file if from_file == "-" else os.path.abspath(from_file), "threads": len(keys)}
    else:
        keys = [thread_key(thread, tenant, sub_tenant, session)]
        selection = {"thread": keys[0]}
    out_format = check_format(fmt)
    location = resolve_store(store)
    request = ExportRequest(
        location=location,
        options={k: v for k, v in store_options(location, environment()).items() if k != "erase_extra"},
        selection=selection,
        output=output,
        keys=keys,
        prefix=prefix,
        force=force,
        tools=tools,
        with_state=with_state,
        missing_ok=missing_ok,
        fmt=out_format,
        window=window,
        tenant=tenant,
        sub_tenant=sub_tenant,
    )
    run(request, environment())
