"""``symfonic mcp``: serve the store read-only to an MCP client (docs/guide/mcp.md)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, List, Optional

import typer

from symfonic_cli.cli.options import StoreOpt
from symfonic_cli.errors import StoreError, SymfonicError, UsageError
from symfonic_cli.vocabulary import GROUP_HELP

if TYPE_CHECKING:
    from symfonic_cli.environment import Environment
    from symfonic_cli.mcp.accesslog import AccessLog
    from symfonic_cli.mcp.scope import Scope
    from symfonic_cli.mcp.tools import Reader

TOKEN_ENV = "SYMFONIC_MCP_TOKEN"
MIN_TOKEN = 16
MAX_ROWS = 10_000
MAX_CHARS = 10_000_000
EXTRA_HINT = "pip install 'symfonic[mcp]'"


def mcp(
    store: StoreOpt = None,
    tenant: Annotated[Optional[List[str]], typer.Option("--tenant", help="Serve only this tenant's threads (repeatable).")] = None,
    sub_tenant: Annotated[Optional[List[str]], typer.Option("--sub-tenant", help="Only these sub-tenants of each --tenant (repeatable; '_' for threads without one).")] = None,
    all_tenants: Annotated[bool, typer.Option("--all-tenants", help="Serve every tenant's threads (instead of --tenant).")] = False,
    max_rows: Annotated[int, typer.Option("--max-rows", min=1, max=MAX_ROWS, help="At most N rows in any list of an answer.")] = 200,
    max_chars: Annotated[int, typer.Option("--max-chars", min=1_000, max=MAX_CHARS, help="At most N characters of JSON per answer.")] = 100_000,
    access_log: Annotated[Optional[Path], typer.Option("--access-log", help="The JSONL access log (0600; default $XDG_STATE_HOME/symfonic/mcp-access.jsonl).")] = None,
    http: Annotated[Optional[str], typer.Option("--http", metavar="HOST:PORT", help="Serve streamable HTTP on a loopback address instead of stdio (needs a token).")] = None,
    token_file: Annotated[Optional[Path], typer.Option("--token-file", help=f"With --http: the file holding the bearer token (else ${TOKEN_ENV}).")] = None,
    check: Annotated[bool, typer.Option("--check", help="Check everything the server needs (the store, the scope, the access log, the address), say what it would serve, and exit.")] = False,
) -> None:
    # The help: vocabulary.GROUP_HELP["mcp"] (the root's help says the same).
    from symfonic_cli.mcp.scope import build_scope

    scope = build_scope(list(tenant or []), list(sub_tenant or []), all_tenants)
    address = _address(http) if http is not None else None
    if token_file is not None and address is None:
        raise UsageError("--token-file goes with --http")
    try:
        import mcp.server.mcpserver  # noqa: F401  (the symfonic[mcp] extra)
        import uvicorn  # noqa: F401
    except ImportError:
        raise StoreError("symfonic mcp needs the MCP SDK, which is not installed", hint=EXTRA_HINT) from None
    token = _token(token_file) if address is not None else None
    _serve(store, scope, max_rows, max_chars, access_log, address, token, check)


def _serve(store_opt: Optional[str], scope: Scope, max_rows: int, max_chars: int, access_log: Optional[Path],
           address: Optional[tuple[str, int]], token: Optional[str], check: bool) -> None:
    from contextlib import ExitStack

    from symfonic_cli.cli.common import open_reading
    from symfonic_cli.api.store import Store
    from symfonic_cli.cli.common import environment
    from symfonic_cli.mcp.accesslog import AccessLog, default_path
    from symfonic_cli.mcp.answer import Caps
    from symfonic_cli.mcp.tools import Reader
    from symfonic_cli.render import escape_inline

    env = environment()
    log = AccessLog(access_log or default_path())
    try:
        with open_reading(store_opt, env, parsed=False) as opened, ExitStack() as reopened:
            from symfonic_cli.mcp import server as mcp_server

            current = opened  # the Store calls go to: a new one after a lost connection

            def reconnect() -> Store | None:
                """After a failed call: the store opened again when its connection was lost (one line
                on stderr), else None."""
                nonlocal current
                if not current.connection_lost():
                    return None
                env.stderr.write("symfonic mcp: the connection to the store was lost; connecting again\n")
                env.stderr.flush()
                current.close()  # the lost connection (closed again on the way out: a no-op)
                try:
                    fresh = reopened.enter_context(open_reading(store_opt, env, parsed=False))
                except SymfonicError:
                    return None  # still unreachable: this call fails, the next tries again
                current = fresh
                return fresh

            reader = Reader(opened, scope, Caps(rows=max_rows, chars=max_chars), log, reconnect)
            app = mcp_server.build_server(reader, env.stderr)
            sock = None
            if address is not None:
                try:
                    sock = mcp_server.listen(*address)
                except OSError as exc:
                    raise UsageError(f"--http cannot listen on {address[0]} port {address[1]}: {exc.strerror or exc}",
                                     hint="choose another port") from None
            where = "stdio" if address is None else f"http://{_host(address[0])}:{address[1]}/mcp"
            if check:
                if sock is not None:
                    sock.close()
                _report(env, reader, where, log)
                return
            def announce() -> None:
                # stdout is the protocol's on stdio: what the operator reads goes to stderr.
                env.stderr.write(escape_inline(f"symfonic mcp: serving {scope.describe()} read-only on {where}; access log {log.path}") + "\n")
                if address is None and env.stdin_isatty():
                    # A person ran it by hand: the protocol's messages come from an MCP client, not a keyboard.
                    env.stderr.write("symfonic mcp: waiting for an MCP client on standard input (an MCP client starts this command); Ctrl-C stops\n")
                env.stderr.flush()

            if address is None:
                mcp_server.run_stdio(app, on_interrupt=lambda: _stopped(env, log), ready=announce)
            else:
                assert sock is not None
                announce()
                mcp_server.run_http(app, sock, token or "")
    finally:
        log.close()


def _report(env: Environment, reader: Reader, where: str, log: AccessLog) -> None:
    """``--check``: what the server would serve, read from the store as a session would see it;
    on a terminal each line wrapped to its width (the path kept whole), off one a line per item."""
    from symfonic_cli.mcp.tools import TOOLS
    from symfonic_cli.render import escape_inline
    from symfonic_cli.render.fit import Whole, fit, width_of

    # Counted as the listing streams: a million threads' rows are never held at once.
    threads = sum(sum(1 for _ in reader.store.listing(tenant=t, sub_tenant=s)) for t, s in reader.scope.narrow(None, None))
    lines = [
        [escape_inline(f"scope: {reader.scope.describe()}"), f"({threads} thread{'' if threads == 1 else 's'} now)"],
        ["transport:", Whole(escape_inline(where))],
        ["access log:", Whole(escape_inline(str(log.path))), "(0600, one line per tool call)"],
        [f"caps: {reader.caps.rows} rows and {reader.caps.chars} characters per answer"],
        [f"tools: {', '.join(TOOLS)} (read-only)"],
    ]
    width = width_of(env.stdout)
    env.stdout.write("".join(fit(pieces, width) + "\n" for pieces in lines))
    env.stdout.flush()


def _host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _stopped(env: Environment, log: AccessLog) -> None:
    log.close()
    env.stderr.write("symfonic mcp: stopped (interrupted)\n")
    env.stderr.flush()


# The loopback addresses the SDK guards against DNS rebinding (Host and Origin checked).
LOOPBACK = ("127.0.0.1", "::1")


def _address(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not port.isdigit() or not port.isascii() or not 1 <= int(port) <= 65535:
        raise UsageError(f"--http '{text}' is not HOST:PORT", hint="e.g. --http 127.0.0.1:8765")
    if host == "localhost":
        host = "127.0.0.1"
    if host not in LOOPBACK:
        raise UsageError(f"--http serves only a loopback address, not '{host}'", hint="use 127.0.0.1 or ::1; put a proxy in front for anything else")
    return host, int(port)


def _token(path: Optional[Path]) -> str:
    import os
    import stat

    if path is not None:
        try:
            info = path.stat()
            text = path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"cannot read the token file {path}: {getattr(exc, 'strerror', None) or 'not UTF-8 text'}") from None
        if stat.S_IMODE(info.st_mode) & 0o077:
            raise UsageError(f"the token file {path} is readable by others", hint=f"chmod 600 {path}")
    else:
        text = os.environ.get(TOKEN_ENV, "").strip()
        if not text:
            raise UsageError("--http needs a bearer token", hint=f"set ${TOKEN_ENV} or give --token-file (never on the command line)")
    if len(text) < MIN_TOKEN or any(c.isspace() or not c.isprintable() for c in text):
        raise UsageError(f"the bearer token must be at least {MIN_TOKEN} printable characters without spaces")
    return text


def register(root: typer.Typer) -> None:
    root.command("mcp", help=GROUP_HELP["mcp"])(mcp)
