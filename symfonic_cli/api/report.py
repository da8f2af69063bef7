"""The Python API's Report (changes/report.py): a store-changing run's events kept as data, never
text. The document ``-f json`` prints is kept (``value``: that JSON parsed, with no text made or
parsed) and each thread is handed, as it is done, to the caller's ``on_thread``: a ``ThreadDone``
whose ``entry`` is the thread's record as the JSON holds it (``-f jsonl``'s ``thread`` line is
the run's head and this entry), or, in a sweep's or a prune's plan, the thread's plan record.
Nothing is shown and no one is asked: a run that needs a confirmation raises ``NotConfirmedError``
(exit 6) unless given ``yes=True``, and says so in the API's words (``confirm``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from symfonic_cli.changes.report import Confirmation, Report, ThreadDone


class Collected(Report):
    streams = True  # a sweep's and a prune's record as it comes

    def __init__(self, on_thread: Callable[[Any], None] | None = None) -> None:
        super().__init__(on_thread)
        self.value: dict[str, Any] | None = None
        self.head: dict[str, Any] = {}
        self.items: list[Any] = []
        self._open = False

    def confirm(self, step: Confirmation) -> None:
        """No one to ask: a plan with anything to change is refused, naming the keyword that
        confirms it (a terminal and ``--yes`` are the command line's)."""
        from symfonic_cli.errors import NotConfirmedError

        if step.threads:
            raise NotConfirmedError(step.refused(": the Python API asks no one"),
                                    hint=f"pass yes=True to {step.operation} without a prompt")

    def _begin(self, head: dict[str, Any]) -> None:
        self.head, self.items, self._open = head, [], True

    def begin(self, head: dict[str, Any]) -> None:
        self._begin(head)

    def dry_run_begin(self, view: Any, head: dict[str, Any]) -> None:
        self._begin(head)

    def thread(self, done: ThreadDone) -> None:
        from symfonic_cli.render import json_value

        entry = json_value(done.entry)
        if self._open:
            self.items.append(entry)
        super().thread(replace(done, entry=entry, head=json_value(done.head)))

    def planned(self, record: dict[str, Any]) -> None:
        from symfonic_cli.render import json_value

        record = json_value(record)
        self.items.append(record)
        super().planned(record)

    def end(self, tail: dict[str, Any], line_head: dict[str, Any] | None = None) -> None:
        from symfonic_cli.render import json_value

        if not self._open:
            return
        self._open = False
        self.value = {**json_value(self.head), "threads": self.items, **json_value(tail)}

    def dry_run_end(self, view: Any, tail: dict[str, Any]) -> None:
        self.end(tail)

    @property
    def open(self) -> bool:
        return self._open

    def ended(self, outcome: Any) -> None:
        """How the run ended: an EraseOutcome's document, an export's ExportResult's ``document()``."""
        self.whole(outcome.document() if callable(outcome.document) else outcome.document)

    def whole(self, doc: dict[str, Any]) -> None:
        """A document made at once (an erase request's receipt or plan, an export's record)."""
        from symfonic_cli.render import json_value

        self.value = json_value(doc)
