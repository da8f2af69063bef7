"""What a changing operation returns to a program: ``RunResult``, the receipt (or, for a dry run,
the plan) as a typed value. It holds the document ``-f json`` prints and reads as that mapping too
(``result["summary"]``, ``dict(result)``, equal to the parsed JSON), so code written against the
Python API's dicts keeps working; ``to_json()`` gives the document itself."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, eq=False)
class RunResult(Mapping[str, Any]):
    operation: str  # "erase", "export", "prune"
    document: dict[str, Any]  # what the command prints with -f json

    def to_json(self) -> dict[str, Any]:
        return self.document

    @property
    def dry_run(self) -> bool:
        return self.document.get("dry_run") is True

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
