"""Expected failures and the exit codes they map to (documented in README.md)."""

from __future__ import annotations

EXIT_OK = 0
EXIT_UNEXPECTED = 1
EXIT_USAGE = 2
EXIT_NOT_FOUND = 3
EXIT_STORE = 4
EXIT_FINDINGS = 5  # compat report: a --fail-on finding is present
EXIT_NOT_CONFIRMED = 6  # erase: no confirmation, nothing deleted


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


class NotConfirmedError(SymfonicError):
    exit_code = EXIT_NOT_CONFIRMED


class FindingsError(SymfonicError):
    exit_code = EXIT_FINDINGS


class ThreadActiveError(SymfonicError):
    """A retention sweep's thread was written after the cut-off: rolled back, reported skipped-active."""

    exit_code = EXIT_OK
