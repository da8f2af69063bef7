"""``symfonic thread export``: a bundle of threads' transcripts and a manifest (GDPR access and
portability). Adds its command to the ``thread`` group (``cli/thread.py``)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from symfonic_cli.cli.common import check_format, environment, store_options
from symfonic_cli.cli.thread import app
from symfonic_cli.cli.options import (
    KeyArg,
    AllSessionsOpt,
    BatchSizeOpt,
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
    erase_selection,
    with_key,
)
from symfonic_cli.errors import UsageError

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.environment import Environment
    from symfonic_cli.export.run import ExportResult


@app.command("export")
def export(
    key: KeyArg = None,
    store: StoreOpt = None,
    thread: ThreadsOpt = None,
    tenant: TenantOpt = None,
    sub_tenant: SubTenantOpt = None,
    session: SessionOpt = None,
    all_sessions: AllSessionsOpt = False,
    from_file: KeyFileOpt = None,
    output: Annotated[Optional[str], typer.Option("--output", "-o", help="The bundle: a directory, or a .zip / .tar.gz file when the name ends so.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing bundle at --output.")] = False,
    tools: Annotated[bool, typer.Option("--tools", help="Add the tool-call fields to each transcript row (as transcript show --tools).")] = False,
    with_state: Annotated[bool, typer.Option("--with-state", help="Add each thread's latest checkpoint channels as state/<name>.json.")] = False,
    current_only: Annotated[bool, typer.Option("--current-only", help="Leave out retained/<name>.json: the messages older checkpoints still hold that the current state does not (compaction removed them).")] = False,
    missing_ok: MissingOkOpt = False,
    fmt: FormatOpt = None,
    inactive_for: InactiveForOpt = None,
    inactive_since: InactiveSinceOpt = None,
    batch_size: BatchSizeOpt = None,
) -> None:
    """Export threads' transcripts to a bundle with a manifest (read-only; never overwrites without --force).

    Each thread becomes transcript/<safe name>.json, exactly what transcript show --format json
    prints, and retained/<safe name>.json the messages older checkpoints still hold that the current
    state does not (compaction removed them; --current-only leaves them out); manifest.json maps the
    file names back to the keys, with row and retained-message counts, activity and SHA-256 of each file. A requested key that names no thread is not-found (exit 3, nothing written).
    """
    thread = with_key(key, thread)
    from symfonic_cli.export.run import ExportRequest, run
    from symfonic_cli.location import resolve_store

    if output is None:
        raise UsageError("where to? pass --output PATH (a directory, or a .zip / .tar.gz file)")
    _refuse_file_name(output)
    env = environment()
    # The same selections as thread erase (selection.py, ERASE rules).
    chosen = erase_selection(
        env, thread=thread, tenant=tenant, sub_tenant=sub_tenant, session=session, all_sessions=all_sessions,
        from_file=from_file, inactive_for=inactive_for, inactive_since=inactive_since, batch_size=batch_size,
        store=store, missing_ok=missing_ok, listed_only=True,
    )
    out_format = check_format(fmt)
    location = resolve_store(store)
    request = ExportRequest(
        location=location,
        options={k: v for k, v in store_options(location, env).items() if k != "erase_extra"},
        selection=chosen.receipt,
        output=output,
        keys=list(chosen.keys) if chosen.keys is not None else None,
        prefix=chosen.prefix if chosen.window is None else None,
        force=force,
        tools=tools,
        with_state=with_state,
        current_only=current_only,
        missing_ok=missing_ok,
        fmt=out_format,
        window=chosen.window,
        tenant=chosen.tenant,
        sub_tenant=chosen.sub_tenant,
        batch_size=batch_size,
    )
    from symfonic_cli.cli.report import TextReport

    _write(run(request, env, TextReport(env, out_format)), out_format, env)  # warnings, not-found keys, progress: on stderr


def _write(result: ExportResult, out_format: str, env: Environment) -> None:
    """What was written: one line for a reader, the document for json and jsonl."""
    from symfonic_cli.render import escape_inline as esc

    out = env.stdout
    from symfonic_cli.render.writers import is_data, write_document

    if is_data(out_format):
        write_document(result.document(), out_format, out)
    else:
        from symfonic_cli.render.fit import Whole, fit, width_of

        missing = result.not_found
        pieces = ["exported", Whole(f"{result.threads} thread(s)"), "to", Whole(esc(result.output) + (";" if missing else ""))]
        if missing:
            pieces.append(Whole(f"{len(missing)} not found"))
        out.write(fit(pieces, width_of(out)) + "\n")
    out.flush()


# Names that say "a file of another kind": a bundle there would be a directory named out.json.
_FILE_SUFFIXES = (".json", ".jsonl", ".ndjson", ".txt", ".csv", ".md", ".html", ".log", ".pdf",
                  ".gz", ".tar", ".tgz", ".bz2", ".xz", ".zst", ".7z", ".rar")


def _refuse_file_name(output: str) -> None:
    name = output.rstrip("/").rsplit("/", 1)[-1].lower()
    if name.endswith((".zip", ".tar.gz")) or output.endswith("/"):
        return
    if name.endswith(_FILE_SUFFIXES):
        raise UsageError(
            f"--output '{output}' names a file, but a bundle is a directory or a .zip / .tar.gz archive",
            hint="end the name in .zip or .tar.gz, or name a directory; a trailing '/' keeps any name",
        )
