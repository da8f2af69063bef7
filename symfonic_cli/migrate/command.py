"""``symfonic migrate``, the orchestration: both stores opened (by the API's opener), select the threads, copy (in-process
or with workers), telling the caller's MigrateReport the progress, and return the outcomes for the
CLI to render (it draws the progress bar: cli/migrate.py)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from symfonic_cli.errors import MigrateIncomplete, StoreError, UsageError
from symfonic_cli.kinds import KINDS
from symfonic_cli.location import StoreLocation
from symfonic_cli.selection import MIGRATE, choose
from symfonic_cli.environment import Environment
from symfonic_cli.changes.report import Report
from symfonic_cli.migrate.params import MigrateRequest

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from symfonic_cli.changes.steps import Pace


@dataclass
class MigrateResult:
    source: str  # the stores' display names (passwords masked)
    target: str
    mode: str  # copy | dry-run | verify-only
    outcomes: list  # ThreadOutcome per thread, in selection order
    totals: dict[str, int]
    verify_only: bool = False
    serializer: str | None = None  # said when the source is encrypted: how the target is written
    stopped: str | None = None  # --max-duration reached (exit 11): the threads after it were not attempted
    planned: int = 0  # threads selected

    def records(self) -> list[dict]:
        return [o.to_json() for o in self.outcomes]

    def document(self) -> dict:
        """What ``migrate -f json`` prints (and the Python API's ``migrate`` returns)."""
        return {
            "source": self.source, "target": self.target, "mode": self.mode,
            **({"target_serializer": self.serializer} if self.serializer else {}),
            "threads": self.records(), "totals": self.totals, **({"stopped": self.stopped} if self.stopped else {}),
        }

    def check(self) -> None:
        """Raise MigrateIncomplete (exit 7) when a thread was not copied and verified; BusyThreads
        (exit 9) when the only ones were busy; StoppedError (exit 11) at the time limit."""
        from symfonic_cli.migrate.copy import BUSY

        bad = [o for o in self.outcomes if not o.ok]
        if bad and all(o.status == BUSY for o in bad) and not self.stopped:
            from symfonic_cli.changes.steps import busy_error

            raise busy_error(len(bad), "copied")
        if self.stopped and not [o for o in bad if o.status != BUSY]:
            from symfonic_cli.errors import EXIT_TIME_LIMIT, StoppedError

            raise StoppedError(f"{self.stopped}; {len(self.outcomes)} of {self.planned} thread(s) done", EXIT_TIME_LIMIT)
        if bad:
            n = len(self.outcomes)
            raise MigrateIncomplete(
                f"{len(bad)} of {n} thread{'s' if n != 1 else ''} not "
                f"{'verified' if self.verify_only else 'copied and verified'} (first: '{bad[0].key}': {bad[0].message or bad[0].status})"
            )


def check_request(source: str | None, target: str | None, *, dry_run: bool, verify_only: bool, init_target: bool) -> None:
    """The usage errors that need no store."""
    if not source or not target:
        raise UsageError("migrate needs --from SOURCE and --to TARGET")
    if dry_run and verify_only:
        raise UsageError("--dry-run and --verify-only are mutually exclusive")
    if init_target and verify_only:
        raise UsageError("--init-target changes the target; it cannot go with --verify-only")


def same_place(a: StoreLocation, b: StoreLocation) -> bool:
    if a.kind != b.kind:
        return False
    if a.path is not None and b.path is not None:  # file stores: the same file, however named
        try:
            return os.path.realpath(a.path) == os.path.realpath(b.path)
        except OSError:
            return False
    return a.url == b.url and a.options == b.options


def default_jobs(target_kind: str, threads: int) -> int:
    # A server takes concurrent transactions; SQLite writers take turns. Workers cost a start-up
    # each (about a second), so a few threads are copied in-process.
    if not KINDS[target_kind].server or threads < 64:
        return 1
    return max(1, min(4, os.cpu_count() or 1))


def run_migrate(req: MigrateRequest, environment: Environment, report: MigrateReport | None = None) -> MigrateResult:
    """Deprecated: ``migrate_stores`` on the stores the API opens (api/front.py). Opens both (as
    ``open_stores``) and migrates as ``migrate_stores``."""
    report = report or MigrateReport()
    src, dst, scratch = open_stores(req, report, _open)
    return migrate_stores(src, dst, req, environment, report, scratch=scratch)


def _open(location: StoreLocation, options: dict[str, Any], *, writable: bool) -> Any:
    from symfonic_cli.stores import open_store

    return open_store(location, writable=writable, **options)


def open_stores(req: MigrateRequest, report: MigrateReport, opener: Callable[..., Any]) -> tuple[Any, Any, str | None]:
    """The source (read-only) and the target, opened in that order by ``opener(location, options,
    writable=...)`` (the API's: api/opening.open_changing) once the two places are checked, and
    the scratch folder of a dry run's ``--init-target`` stand-in (else None). Errors name the
    option typed (--from, --to); the source is closed when the target cannot be opened."""
    if same_place(req.source, req.target):
        raise UsageError("--from and --to are the same store")
    if req.target.path:  # a file store
        from symfonic_cli.output_paths import refuse_store_path

        # A target at the source's -wal/-shm/-journal made the source unopenable; and the reverse.
        refuse_store_path(req.target.path, req.source, "--to")
        if req.source.path:
            refuse_store_path(req.source.path, req.target, "--from", why="the target writes there")
    src = as_option("--from", opener, req.source, req.source_options, writable=False)
    report.opened(src.open_warnings)
    try:
        writable = not (req.dry_run or req.verify_only)
        extra = {"init_target": True} if req.init_target and not req.dry_run else {}
        dst, scratch = _open_target(
            req.target, req.target_options, writable=writable, extra=extra,
            init_dry_run=req.init_target and req.dry_run, report=report, opener=opener,
        )
    except BaseException:
        src.close()
        raise
    return src, dst, scratch


def migrate_stores(src: Any, dst: Any, req: MigrateRequest, environment: Environment, report: MigrateReport | None = None,
                   *, scratch: str | None = None) -> MigrateResult:
    """Copy (or dry-run, or verify) the selected threads from ``src`` to ``dst`` (``open_stores``'s;
    both closed here, and ``scratch`` removed); the outcomes, whatever they are. What a reader is
    told as it goes goes to ``report`` (the caller's; by default no one)."""
    from symfonic_cli.changes.steps import hold_run_lock
    from symfonic_cli.migrate import copy as migration
    from symfonic_cli.migrate.workers import run_parallel

    report = report or MigrateReport()
    try:
        writable = not (req.dry_run or req.verify_only)
        try:
            if writable:  # a live target: bounded lock waits, and one changing run at a time (exit 10, --wait)
                dst.set_lock_timeout(req.lock_timeout)
                hold_run_lock(dst, "migrate", wait=req.wait, location=req.target, told=report.waiting)
            serializer = _target_serializer(src, req.to_plaintext)
            given = dict(req.selection_options)
            selection = choose(MIGRATE, environment=environment, thread=given.pop("threads", None), **given)
            keys = selection.keys_in(src)
            # The stand-in lives in one process's scratch folder: no workers for it; a time window or a
            # pace is kept between one process's transactions.
            paced = req.max_duration is not None or req.pace is not None
            workers = 1 if scratch or paced else min(req.jobs or default_jobs(req.target.kind, len(keys)), len(keys))
            stopped = None
            with report.copying(len(keys), environment) as progress:
                if workers > 1:
                    # Both stores opened fine here; the workers open their own (this one keeps the run lock).
                    outcomes = run_parallel(
                        req.source, req.target, req.source_options, req.target_options, keys, jobs=workers,
                        dry_run=req.dry_run, verify_only=req.verify_only, to_plaintext=req.to_plaintext,
                        on_thread=progress.advance, lock_timeout=req.lock_timeout,
                    )
                else:
                    migrator = migration.Migrator(src, dst, dry_run=req.dry_run, to_plaintext=req.to_plaintext)
                    outcomes, stopped = _paced(migration.run(migrator, keys, verify_only=req.verify_only, on_thread=progress.advance),
                                               req.max_duration, req.pace)
        finally:
            dst.close()
            if scratch:
                import shutil

                shutil.rmtree(scratch, ignore_errors=True)
    finally:
        src.close()
    return MigrateResult(
        source=req.source.display, target=req.target.display, mode=req.mode,
        outcomes=outcomes, totals=migration.totals(outcomes), verify_only=req.verify_only, serializer=serializer, stopped=stopped,
        planned=len(keys),
    )


def _paced(outcomes, max_duration: timedelta | None, pace: Pace | None) -> tuple[list, str | None]:
    """The copies one after another, with --pause/--max-rate between them; at --max-duration the
    run stops before the next thread (the reason, else None). A rerun skips what was copied."""
    import time

    from symfonic_cli.changes.steps import time_limit

    started = time.monotonic()
    deadline = started + max_duration.total_seconds() if max_duration is not None else None
    done: list = []
    it = iter(outcomes)
    while True:
        if pace is not None:
            pace.wait_before(len(done) + 1, started, _NO_INTERRUPT)
        if done and deadline is not None and time.monotonic() >= deadline:
            stop = time_limit(max_duration)
            return done, stop.reason if stop is not None else None
        outcome = next(it, None)
        if outcome is None:
            return done, None
        done.append(outcome)


class _NoInterrupt:
    asked = False  # Ctrl-C ends migrate as before (KeyboardInterrupt): a thread is one transaction


_NO_INTERRUPT: Any = _NoInterrupt()


def _target_serializer(src, to_plaintext: bool) -> str | None:
    """How the target is written when the source is encrypted (None: it is not): with the
    source's EncryptedSerializer and key, or in the clear with --to-plaintext."""
    from symfonic_cli.codec import cipher

    if not src.encryption_census().encrypted:
        cipher.set_target_encryption(False)
        return None
    if cipher.key() is None:
        raise StoreError(f"the source store is encrypted ({cipher.NAME}); {cipher.KEY_HINT}")
    cipher.set_target_encryption(not to_plaintext)
    if to_plaintext:
        return "plaintext (--to-plaintext): values decrypted with the source's key and written in the clear"
    return f"encrypted as the source ({cipher.NAME}, the same key)"


def as_option(option: str, fn, *args, **kwargs):
    """Errors about a store name the option the user typed (--from, --to), not --store."""
    from symfonic_cli.errors import SymfonicError

    try:
        return fn(*args, **kwargs)
    except SymfonicError as exc:
        if exc.hint:
            exc.hint = exc.hint.replace("check --store", f"check {option}").replace("pass --store", f"pass {option}")
            if option == "--to" and "never creates a store" in exc.hint:
                exc.hint += "; --init-target creates a new target with the saver's own setup()"
        raise


def _open_target(dst_loc, dst_options, *, writable: bool, extra: dict, init_dry_run: bool, report: MigrateReport,
                 opener: Callable[..., Any]):
    """The target, and a scratch folder to remove when the plan ran against an empty stand-in.

    ``--init-target --dry-run`` towards a SQLite file that does not exist yet: nothing is created;
    the plan runs against an empty store of the saver's own tables in a scratch folder (every
    thread "would copy"), and ``report`` is told what the real run would create."""
    if init_dry_run and dst_loc.path is not None and not os.path.lexists(dst_loc.path):
        import tempfile

        from symfonic_cli.location import parse_location

        scratch = tempfile.mkdtemp(prefix="symfonic-plan-")
        stand_in = parse_location(os.path.join(scratch, "target.db"))
        dst = opener(stand_in, {"init_target": True}, writable=True)
        report.init_target_planned(dst_loc.path)
        return dst, scratch
    dst = as_option("--to", opener, dst_loc, {**dst_options, **extra}, writable=writable)
    report.opened(dst.open_warnings)
    if init_dry_run:
        report.init_target_planned(None)
    return dst, None


class MigrateReport(Report):
    """What a migration tells its caller (changes/report.py: ``opened``, ``waiting``) and its own
    events: ``init_target_planned(path)`` (a dry run's ``--init-target``: the file it would create,
    or None: setup() on the existing store) and ``copying(total)``, the copy's progress. It writes
    no text; the command line's (cli/migrate.py) draws the bar and says the lines."""

    def init_target_planned(self, path: str | None) -> None:
        pass

    def copying(self, total: int, environment: Environment) -> Copying:
        return Copying(total, environment)


class Copying:
    """The copy's progress: ``advance(outcome)`` after each thread, told to the Environment's
    ``on_progress`` (a program's callback) as ``("copied", done, total)``."""

    def __init__(self, total: int, environment: Environment) -> None:
        self.total, self.environment, self.told = total, environment, 0

    def __enter__(self) -> Copying:
        return self

    def advance(self, outcome: Any) -> None:
        self.told += 1
        if self.environment.on_progress is not None:
            self.environment.on_progress("copied", self.told, self.total)

    def __exit__(self, *exc: object) -> None:
        pass
