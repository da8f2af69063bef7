"""``Store.compat``'s answer: the compat report a front end renders, with the views the command
shows (its pairs for a table, its by-thread rows) and what ``--fail-on`` judges, as data."""

from __future__ import annotations

from symfonic_cli.compat.envelope import CURRENT_FORMAT, DEFAULT_ENVELOPE_KEY  # noqa: F401 - the options' defaults

# typing.TYPE_CHECKING without importing typing (the quick route loads this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

    from symfonic_cli.environment import Environment

STORE, THREAD, BY_THREAD = "store", "thread", "by-thread"
# compat report --by-thread's columns, and compat show's.
BY_THREAD_COLUMNS = ("thread", "checkpoints", "latest_status", "writer_line", "format_version",
                     "safe_boundary", "in_flight", "interrupted", "corrupt", "newer", "releases")
CHECKPOINT_COLUMNS = ("checkpoint_id", "checkpoint_ns", "step", "source", "ts", "status", "writer_line",
                      "format_version", "safe_boundary", "finalized", "note")


class CompatAnswer:
    """``.mode`` (``store``, ``thread`` or ``by-thread``); ``.report`` (store, thread) or
    ``.reports`` (by-thread: one thread's report at a time, as read); ``.findings`` by name (for
    by-thread complete once ``reports`` is read)."""

    def __init__(self, outcome: Any) -> None:
        self.mode: str = outcome.mode
        self.report = outcome.report
        self.reports: Iterator[Any] = iter(outcome.reports or ())
        self.findings: dict[str, int] = outcome.findings

    def pairs(self, environment: Environment) -> list[tuple[str, Any]]:
        """The report as a table's (name, value) pairs (unescaped), times in ``environment``'s --tz."""
        from symfonic_cli.compat import command as cc

        if self.mode == THREAD:
            return cc.thread_pairs(self.report, environment)
        return cc.store_pairs(self.report, environment)

    def rows(self, *, data: bool) -> Iterator[dict[str, Any]]:
        """By-thread: each thread's record (``data``: its JSON) or its row as a table shows it."""
        from symfonic_cli.compat import command as cc

        return (rep.to_json() if data else cc.thread_row(rep) for rep in self.reports)

    def failed(self, fail_on: Iterable[str]) -> list[str]:
        """The findings of ``fail_on`` the report holds."""
        from symfonic_cli.compat.report import failed

        return failed(self.findings, fail_on)

    def named(self, hit: list[str]) -> str:
        """Each finding's checkpoints, and where the report knows them its threads (the first one)
        and releases: the one line an alert shows should say where to look (escaped)."""
        from symfonic_cli.render import escape_inline

        findings = self.findings
        if self.mode == THREAD:
            return escape_inline(", ".join(f"{f}: {findings[f]} checkpoint(s)" for f in hit) + f" in thread '{self.report.key}'")
        if self.mode != STORE:
            return ", ".join(f"{f}: {findings[f]} checkpoint(s)" for f in hit)
        from symfonic_cli.compat.releases import release_text

        parts = []
        for f in hit:
            text = f"{f}: {findings[f]} checkpoint(s)"
            found = self.report.releases.label_json((f, None))
            if found["threads"]:
                releases = [release_text(r["package_version"]) for r in found["package_versions"]]
                text += f" in {found['threads']} thread(s), first '{found['first_threads'][0]}'"
                if releases:
                    text += f", written by {', '.join(releases[:3])}{', ...' if len(releases) > 3 else ''}"
            parts.append(text)
        return escape_inline("; ".join(parts))
