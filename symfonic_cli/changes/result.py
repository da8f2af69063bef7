"""What a changing operation returns to a program: ``RunResult``, the receipt (or, for a dry run,
the plan; for migrate, its record) as a typed value, and ``Plan``, what an operation would do
(api/plans.py makes and runs it). It holds the document ``-f json`` prints and reads as that mapping too
(``result["summary"]``, ``dict(result)``, equal to the parsed JSON), so code written against the
Python API's dicts keeps working; ``to_json()`` gives the document itself."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, eq=False)
class RunResult(Mapping[str, Any]):
    operation: str  # "erase", "export", "prune", "migrate", "rewind"
    document: dict[str, Any]  # what the command prints with -f json

    def to_json(self) -> dict[str, Any]:
        return self.document

    @property
    def dry_run(self) -> bool:
        return self.document.get("dry_run") is True or self.document.get("mode") == "dry-run"

    @property
    def totals(self) -> dict[str, Any] | None:
        """migrate's counts (copied, skipped, verified, ...)."""
        return self.document.get("totals")

    @property
    def threads(self) -> Any:
        """Each thread's plan or outcome (an export: how many threads the bundle holds)."""
        return self.document.get("threads")

    @property
    def summary(self) -> dict[str, Any] | None:
        return self.document.get("summary")

    @property
    def receipt_id(self) -> str | None:
        return self.document.get("receipt_id")

    def __getitem__(self, name: str) -> Any:
        return self.document[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.document)

    def __len__(self) -> int:
        return len(self.document)


def result_of(operation: str, document: dict[str, Any] | None) -> RunResult | None:
    return RunResult(operation, document) if document is not None else None


@dataclass(frozen=True, eq=False)
class Plan(RunResult):
    """What a changing operation would do, every check made and nothing changed: its dry run's
    document (``-f json --dry-run``; an export's lists the threads it would write), typed as a
    RunResult is. ``thread_keys`` are the threads planned, in order; ``changes`` those the run would change
    (erase: rows to erase; prune: checkpoints to delete; export: every one; migrate: to copy).
    ``api.execute(plan)`` runs it on exactly these threads."""

    request: Any = field(default=None, repr=False)  # the operation's request, as checked
    runner: Any = field(default=None, repr=False)  # what runs it: (request, environment)

    @property
    def thread_keys(self) -> tuple[str, ...]:
        threads = self.document.get("threads")
        return tuple(_key(t) for t in threads) if isinstance(threads, list) else ()

    @property
    def changes(self) -> tuple[str, ...]:
        threads = self.document.get("threads")
        if not isinstance(threads, list):
            return ()
        if self.operation == "export":
            return self.thread_keys
        going = {"erase": ("erase",), "prune": ("prune",), "migrate": ("copy",), "rewind": ("rewind",)}[self.operation]
        return tuple(_key(t) for t in threads if t.get("status") in going)


def _key(thread: dict[str, Any]) -> str:
    return thread["thread"] if "thread" in thread else thread["key"]  # migrate's records say "thread"


@dataclass(frozen=True)
class EraseOutcome:
    """How a run ended, for the caller to render (cli/erase.py: the summary line) or return (the
    Python API): the receipt (a dry run: the plan document), which run made it (``erase``, a
    ``sweep``, a ``prune``), the --receipt file holding it (None: no file holds the whole
    receipt), and how many threads had recent activity (a sweep's receipt lists no threads)."""

    document: dict[str, Any]
    dry_run: bool
    run: str = "erase"
    kept_at: str | None = None
    recent: int = 0
