"""The typer option types shared by the command groups."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from symfonic_cli.cli.common import MAX_BATCH
from symfonic_cli.location import STORE_ENV

StoreOpt = Annotated[
    Optional[str],
    typer.Option(
        "--store",
        "-s",
        envvar=STORE_ENV,
        show_envvar=True,
        help="Store URL (sqlite:///file.db, postgresql://..., mongodb://...), a file path, or a name from the config file.",
    ),
]
ThreadOpt = Annotated[Optional[str], typer.Option("--thread", "-t", help="Thread key tenant:sub:session.")]
TenantOpt = Annotated[Optional[str], typer.Option("--tenant", help="Tenant id (derives the key with --session).")]
SubTenantOpt = Annotated[Optional[str], typer.Option("--sub-tenant", help="Sub-tenant id ('_' in the key when absent).")]
SessionOpt = Annotated[Optional[str], typer.Option("--session", help="Session id (derives the key with --tenant).")]
FormatOpt = Annotated[
    Optional[str],
    typer.Option(
        "--format",
        "-f",
        help="table, text, json or jsonl (default: table on a terminal, text otherwise).",
        case_sensitive=False,
    ),
]
BatchSizeOpt = Annotated[
    Optional[int],
    typer.Option(
        "--batch-size",
        min=1,
        max=MAX_BATCH,
        help=f"A retention sweep (--inactive-for/--inactive-since) reads, plans and handles N threads at a time (1 to {MAX_BATCH}; default 500).",
    ),
]
