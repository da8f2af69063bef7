"""``symfonic migrate``: copy threads between stores, verbatim and verified."""

from __future__ import annotations

from typing import Annotated, List, Optional

import typer

from symfonic_cli.cli.common import MAX_JOBS, check_format, environment, store_options
from symfonic_cli.cli.options import FormatOpt, LockTimeoutOpt, MaxDurationOpt, MaxRateOpt, PauseOpt, SubTenantOpt, max_duration_of, pace_of
from symfonic_cli.limits import DEFAULT_LOCK_TIMEOUT
from symfonic_cli.vocabulary import GROUP_HELP
from symfonic_cli.environment import Environment

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.migrate.command import MigrateResult

COLUMNS = ("thread", "status", "checkpoints_copied", "checkpoints_skipped", "writes_copied", "writes_skipped", "verified", "message")


def migrate(
    source: Annotated[Optional[str], typer.Option("--from", help="Source store (URL, file path or config name); opened read-only.")] = None,
    target: Annotated[Optional[str], typer.Option("--to", help="Target store (URL, file path or config name).")] = None,
    thread: Annotated[Optional[List[str]], typer.Option("--thread", "-t", help="A thread key (repeatable).")] = None,
    tenant: Annotated[Optional[str], typer.Option("--tenant", help="Every thread of a tenant (or one with --session).")] = None,
    sub_tenant: SubTenantOpt = None,
    session: Annotated[Optional[str], typer.Option("--session", help="With --tenant: one session's thread.")] = None,
    from_file: Annotated[Optional[str], typer.Option("--from-file", help="A file of thread keys, one per line ('-' for stdin).")] = None,
    all_threads: Annotated[bool, typer.Option("--all", help="Every thread of the source.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show per thread what would be copied, skipped or in conflict; write nothing.")] = False,
    verify_only: Annotated[bool, typer.Option("--verify-only", help="Only compare the target with the source; write nothing.")] = False,
    init_target: Annotated[bool, typer.Option("--init-target", help="Run the target saver's own setup() first (creates its tables).")] = False,
    jobs: Annotated[Optional[int], typer.Option("--jobs", "-j", min=1, max=MAX_JOBS, help="Copy N threads at a time (worker processes; each thread still one transaction). Default: one per CPU, up to 4, towards a database server for 64+ threads; else 1.")] = None,
    to_plaintext: Annotated[bool, typer.Option("--to-plaintext", help="An encrypted source (EncryptedSerializer) is written to the target decrypted; by default the target is encrypted with the same key.")] = False,
    fmt: FormatOpt = None,
    lock_timeout: LockTimeoutOpt = DEFAULT_LOCK_TIMEOUT,
    wait: Annotated[bool, typer.Option("--wait", help="Another migrate, erase or prune changes the target: wait for it to finish (default: exit 10, naming it).")] = False,
    max_duration: MaxDurationOpt = None,
    pause: PauseOpt = None,
    max_rate: MaxRateOpt = None,
) -> None:
    # The help: vocabulary.GROUP_HELP["migrate"] (the root's help says the same).
    from symfonic_cli.location import resolve_store
    from symfonic_cli.cli.migrate_report import MigrateTextReport
    from symfonic_cli.migrate.command import MigrateRequest, as_option, check_request, run_migrate

    check_request(source, target, dry_run=dry_run, verify_only=verify_only, init_target=init_target)
    out_format = check_format(fmt)
    env = environment()
    src_loc, dst_loc = as_option("--from", resolve_store, source), as_option("--to", resolve_store, target)
    result = run_migrate(
        MigrateRequest(
            source=src_loc, target=dst_loc,
            source_options=store_options(src_loc, env), target_options=store_options(dst_loc, env),
            selection_options={
                "threads": list(thread or []), "tenant": tenant, "sub_tenant": sub_tenant, "session": session,
                "from_file": from_file, "all_threads": all_threads,
            },
            dry_run=dry_run, verify_only=verify_only, init_target=init_target, jobs=jobs, to_plaintext=to_plaintext,
            lock_timeout=lock_timeout, wait=wait, max_duration=max_duration_of(max_duration), pace=pace_of(pause, max_rate),
        ),
        env,
        MigrateTextReport(env, out_format),  # on stderr as it goes: warnings, the progress bar
    )
    _write(result, out_format, env)
    result.check()


def _write(result: MigrateResult, out_format: str, env: Environment) -> None:
    from symfonic_cli import render

    out = env.stdout
    if render.is_data(out_format):  # the format's writer takes the document or its records
        render.write_result(result.document(), result.records(), out_format, out)
        return
    records = result.records()
    render.write_records(records, fmt=out_format, columns=COLUMNS, title=f"{result.source} -> {result.target}", environment=env)
    t = result.totals
    if result.mode == "dry-run":  # what a copy would do, in the rows' own words (copy, skip), never "copied"
        line = (f"dry run, nothing written: threads {t['threads']}, would copy {t['copied']}, skip {t['skipped']}, "
                f"conflict {t['conflict']}, fail {t['failed']}; checkpoints to copy {t['checkpoints_copied']}, "
                f"writes to copy {t['writes_copied']}")
    else:
        line = ", ".join(f"{k} {v}" for k, v in t.items())
    if result.serializer:
        line += f"; target: {result.serializer}"
    if out_format == "table":
        render.console(env).print(line)
    else:
        out.write(f"# {line}\n")


def register(app: typer.Typer) -> None:
    app.command("migrate", help=GROUP_HELP["migrate"])(migrate)
