"""Options and helpers shared by the command groups: which store, which thread, which format."""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING, Iterator, Optional

import typer
from typing_extensions import Annotated

from symfonic_cli.errors import NotFoundError, UsageError
from symfonic_cli.location import STORE_ENV, resolve_store
from symfonic_cli.threadkey import derive_key

if TYPE_CHECKING:
    from symfonic_cli.stores.base import Store

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


def check_format(fmt: Optional[str], allowed: tuple[str, ...] = ("table", "text", "json", "jsonl")) -> str:
    from symfonic_cli.render import default_format

    if fmt is not None and fmt.lower() not in allowed:
        raise UsageError(f"unknown --format '{fmt}'", hint=f"use one of: {', '.join(allowed)}")
    chosen = default_format(fmt.lower() if fmt else None)
    return chosen if chosen in allowed else allowed[0]


def thread_key(thread: Optional[str], tenant: Optional[str], sub_tenant: Optional[str], session: Optional[str]) -> str:
    """``--thread KEY`` or ``--tenant T [--sub-tenant S] --session ID``, exactly one of them."""
    if thread is not None:
        if tenant is not None or sub_tenant is not None or session is not None:
            raise UsageError("give either --thread or --tenant/--sub-tenant/--session, not both")
        if not thread:
            raise UsageError("--thread is empty")
        return thread
    if tenant is None or session is None:
        raise UsageError("which thread?", hint="pass --thread KEY or --tenant T --session ID")
    if not tenant or not session:
        raise UsageError("--tenant and --session must not be empty")
    return derive_key(tenant, sub_tenant, session)


# Set by the root command from --connect-timeout, --pg-schema, --checkpoint-collection, ...
connection_options: dict = {}


def store_options(location) -> dict:
    """Connection options for a store: the config file's entry first, the command line over it."""
    merged = dict(location.options)
    merged.update(connection_options)
    return merged


@contextmanager
def open_for_reading(store_opt: Optional[str], **options) -> Iterator["Store"]:
    from symfonic_cli.stores import open_store

    location = resolve_store(store_opt)
    store = open_store(location, writable=False, **{**store_options(location), **options})
    try:
        yield store
    finally:
        store.close()


def require_thread(store: "Store", key: str):
    """The thread's summary, or exit 3 naming the key and up to five threads of its tenant."""
    from symfonic_cli.threadkey import parse_key

    summary = store.thread_summary(key)
    if summary is not None:
        return summary
    parts = parse_key(key)
    if parts is None:
        raise NotFoundError(f"no thread '{key}' in {store.location.display}")
    near = [t.key for t in store.list_threads(tenant=parts.tenant, limit=5)]
    if near:
        listed = ", ".join(f"'{k}'" for k in near)
        raise NotFoundError(f"no thread '{key}' in {store.location.display}; threads of tenant '{parts.tenant}': {listed}")
    raise NotFoundError(f"no thread '{key}' in {store.location.display}; tenant '{parts.tenant}' has no threads")
