"""Expected failures and the exit codes they map to (documented in README.md)."""

from __future__ import annotations

EXIT_OK = 0
EXIT_UNEXPECTED = 1
EXIT_USAGE = 2
EXIT_NOT_FOUND = 3
EXIT_STORE = 4
EXIT_FINDINGS = 5  # compat report: a --fail-on finding is present
EXIT_NOT_CONFIRMED = 6  # erase: no confirmation, nothing deleted
EXIT_MIGRATE_INCOMPLETE = 7  # migrate: a thread in conflict, refused, failed or not verified
EXIT_WRITTEN_AGAIN = 8  # erase: committed, but rows of the thread were found after the commit
EXIT_BUSY = 9  # erase, prune, migrate: some threads were busy (locks not had within --lock-timeout), skipped
EXIT_LOCKED = 10  # erase, prune, migrate: another erase, prune or migrate changes the same store (--wait waits for it)
EXIT_TIME_LIMIT = 11  # erase, prune, migrate: --max-duration reached, stopped between two threads; a rerun continues
EXIT_WAL_KEPT = 12  # erase (SQLite): erased and verified, but a reader's snapshot kept the -wal from being truncated
EXIT_HEAD_MOVED = 13  # rewind: the thread was written after the plan; nothing written
EXIT_RECENTLY_WRITTEN = 14  # rewind: the thread was written within --idle-for; nothing written
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT), or end of input at a prompt
EXIT_BROKEN_PIPE = 141  # the reader went away (| head): silent, 128 + SIGPIPE, as git and a shell report it


class SymfonicError(Exception):
    """An expected failure: printed as one line on stderr, no traceback."""

    exit_code = EXIT_UNEXPECTED

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def line(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


class UsageError(SymfonicError):
    exit_code = EXIT_USAGE


class NotFoundError(SymfonicError):
    exit_code = EXIT_NOT_FOUND


class StoreError(SymfonicError):
    """The store cannot be opened, read or is not a LangGraph checkpoint store."""

    exit_code = EXIT_STORE


class FileAccessError(SymfonicError):
    """A file the command reads or writes (other than the store) cannot be opened, read or written."""

    exit_code = EXIT_STORE


class NotConfirmedError(SymfonicError):
    exit_code = EXIT_NOT_CONFIRMED


class FindingsError(SymfonicError):
    exit_code = EXIT_FINDINGS


class MigrateIncomplete(SymfonicError):
    """Some thread was in conflict, refused, failed, or did not verify (summary already printed)."""

    exit_code = EXIT_MIGRATE_INCOMPLETE


class ReceiptError(SymfonicError):
    """erase: the --receipt file could not be written: the run stopped before the next thread."""

    exit_code = EXIT_STORE


class StoppedError(SymfonicError):
    """erase stopped part-way (the receipt still lists what was erased), with the stop's exit code."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class EraseIncomplete(SymfonicError):
    """erase: some thread failed; its receipt record already says why, so no further line is printed
    (EXIT_STORE when a thread rolled back or its rows left are unknown, else EXIT_WRITTEN_AGAIN:
    each failed erase committed and verification found the thread written again)."""

    def __init__(self, exit_code: int) -> None:
        super().__init__("")
        self.exit_code = exit_code


class ThreadBusy(StoreError):
    """A lock (a row, or SQLite's write lock) not had within the lock timeout: the statement gave up
    and the thread's transaction rolled back. erase and prune report the thread ``busy`` and go on;
    elsewhere it is a store error."""


class BusyThreads(SymfonicError):
    """erase, prune: the run ended with threads skipped as ``busy`` (a rerun takes them)."""

    exit_code = EXIT_BUSY


class StoreLocked(SymfonicError):
    """erase, prune: another run holds the store's run lock; nothing was done."""

    exit_code = EXIT_LOCKED


class WalKept(SymfonicError):
    """erase (SQLite): the erasure committed and verified, but the write-ahead log could not be
    truncated (a reader holds a snapshot), so the -wal file still holds erased text."""

    exit_code = EXIT_WAL_KEPT

    def __init__(self, message: str, *, hint: str | None = None, notes: list[str] | None = None) -> None:
        super().__init__(message, hint=hint)
        self.notes = notes or []  # what the finish did before it (VACUUM)


class WrittenAgainError(SymfonicError):
    """A change committed, and then an application wrote the thread (verification after the commit)."""

    exit_code = EXIT_WRITTEN_AGAIN


class ThreadActiveError(SymfonicError):
    """A retention sweep's thread was written after the cut-off: rolled back, reported skipped-active."""

    exit_code = EXIT_OK


class HeadMoved(SymfonicError):
    """rewind: inside its transaction the thread's newest checkpoint is no longer the plan's (an
    application wrote it meanwhile); rolled back, nothing written."""

    exit_code = EXIT_HEAD_MOVED


class RecentlyWritten(SymfonicError):
    """rewind: the thread was written within --idle-for (the agent may be mid-run); nothing written."""

    exit_code = EXIT_RECENTLY_WRITTEN
