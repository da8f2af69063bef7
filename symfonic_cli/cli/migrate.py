"""``symfonic migrate``: copy threads between stores, verbatim and verified."""

from __future__ import annotations

import os
import sys
from typing import Annotated, List, Optional

import typer

from symfonic_cli.cli.common import MAX_JOBS, check_format, environment, store_options
from symfonic_cli.cli.options import FormatOpt, SubTenantOpt
from symfonic_cli.errors import MigrateIncomplete, UsageError

COLUMNS = ("thread", "status", "checkpoints_copied", "checkpoints_skipped", "writes_copied", "writes_skipped", "verified", "message")


def _default_jobs(target_kind: str, threads: int) -> int:
    # A server takes concurrent transactions; SQLite writers take turns. Workers cost a start-up
    # each (about a second), so a few threads are copied in-process.
    if target_kind == "sqlite" or threads < 64:
        return 1
    import os

    return max(1, min(4, os.cpu_count() or 1))


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
    fmt: FormatOpt = None,
) -> None:
    """Copy threads from --from to --to: never overwriting, one target transaction per thread, then verified."""
    if not source or not target:
        raise UsageError("migrate needs --from SOURCE and --to TARGET")
    if dry_run and verify_only:
        raise UsageError("--dry-run and --verify-only are mutually exclusive")
    if init_target and (dry_run or verify_only):
        raise UsageError("--init-target changes the target; it cannot go with --dry-run or --verify-only")
    out_format = check_format(fmt)

    from symfonic_cli.location import resolve_store
    from symfonic_cli.migrate import copy as migration
    from symfonic_cli.migrate.workers import run_parallel
    from symfonic_cli.stores import open_store

    src_loc, dst_loc = resolve_store(source), resolve_store(target)
    if src_loc.kind == dst_loc.kind and _same_place(src_loc, dst_loc):
        raise UsageError("--from and --to are the same store")
    env = environment()
    src_options, dst_options = store_options(src_loc, env), store_options(dst_loc, env)
    src = open_store(src_loc, writable=False, **src_options)
    try:
        writable = not (dry_run or verify_only)
        extra = {"init_target": True} if init_target else {}
        dst = open_store(dst_loc, writable=writable, **{**dst_options, **extra})
        try:
            keys = migration.select_threads(
                src, threads=list(thread or []), tenant=tenant, sub_tenant=sub_tenant, session=session,
                from_file=from_file, all_threads=all_threads, environment=env,
            )
            workers = min(jobs or _default_jobs(dst_loc.kind, len(keys)), len(keys))
            with _Progress(len(keys)) as progress:
                if workers > 1:
                    # Both stores opened fine here; the workers open their own.
                    dst.close()
                    outcomes = run_parallel(
                        src_loc, dst_loc, src_options, dst_options, keys, jobs=workers,
                        dry_run=dry_run, verify_only=verify_only, on_thread=progress.advance,
                    )
                else:
                    migrator = migration.Migrator(src, dst, dry_run=dry_run)
                    outcomes = list(migration.run(migrator, keys, verify_only=verify_only, on_thread=progress.advance))
        finally:
            dst.close()
    finally:
        src.close()

    summary = migration.totals(outcomes)
    _write(outcomes, summary, out_format, src_loc.display, dst_loc.display, dry_run, verify_only)
    bad = [o for o in outcomes if not o.ok]
    if bad:
        raise MigrateIncomplete(
            f"{len(bad)} of {len(outcomes)} thread{'s' if len(outcomes) != 1 else ''} not "
            f"{'verified' if verify_only else 'copied and verified'} (first: '{bad[0].key}': {bad[0].message or bad[0].status})"
        )


def _same_place(a, b) -> bool:
    if a.kind == "sqlite" and a.path is not None and b.path is not None:
        try:
            return os.path.realpath(a.path) == os.path.realpath(b.path)
        except OSError:
            return False
    return a.url == b.url and a.options == b.options


def _write(outcomes, summary, out_format, src, dst, dry_run, verify_only) -> None:
    from symfonic_cli import render

    records = [o.to_json() for o in outcomes]
    if out_format == "json":
        doc = {
            "source": src,
            "target": dst,
            "mode": "dry-run" if dry_run else "verify-only" if verify_only else "copy",
            "threads": records,
            "totals": summary,
        }
        sys.stdout.write(render.json_dumps(doc, indent=2) + "\n")
        return
    if out_format == "jsonl":
        render.write_records(records, fmt="jsonl", columns=())
        return
    render.write_records(records, fmt=out_format, columns=COLUMNS, title=f"{src} -> {dst}")
    line = ", ".join(f"{k} {v}" for k, v in summary.items())
    if out_format == "table":
        render.console().print(line)
    else:
        sys.stdout.write(f"# {line}\n")


class _Progress:
    """Threads, checkpoints and rate on stderr, only when stderr is a terminal."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.bar = None
        self.checkpoints = 0

    def __enter__(self):
        from symfonic_cli.render import is_terminal

        if is_terminal(sys.stderr) and self.total:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            self.bar = Progress(
                TextColumn("threads"), BarColumn(), MofNCompleteColumn(),
                TextColumn("{task.fields[checkpoints]} checkpoints, {task.fields[rate]}"), TimeElapsedColumn(),
                console=Console(file=sys.stderr, markup=False, highlight=False), transient=True,
            )
            self.bar.start()
            self.task = self.bar.add_task("migrate", total=self.total, checkpoints=0, rate="")
        return self

    def advance(self, outcome) -> None:
        if self.bar is None:
            return
        self.checkpoints += outcome.checkpoints_copied + outcome.checkpoints_skipped
        elapsed = self.bar.tasks[0].elapsed or 0.0
        done = self.bar.tasks[0].completed + 1
        rate = f"{done / elapsed:.1f} threads/s" if elapsed > 0 else ""
        self.bar.update(self.task, advance=1, checkpoints=self.checkpoints, rate=rate)

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.stop()


def register(app: typer.Typer) -> None:
    app.command("migrate")(migrate)
