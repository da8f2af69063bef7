"""``symfonic migrate``'s Report (migrate/command.py's MigrateReport): on stderr as the copy goes,
the stores' warnings, the ``--wait`` line, a dry run's ``--init-target`` line and, on a terminal,
the progress bar (threads, checkpoints, rate; one plain line rewritten with NO_COLOR)."""

from __future__ import annotations

from typing import Any

from symfonic_cli.cli.report import TextReport
from symfonic_cli.environment import Environment
from symfonic_cli.api.runs import Copying, MigrateReport


class MigrateTextReport(TextReport, MigrateReport):
    """migrate's events on stderr: the stores' warnings, the ``--wait`` line, a dry run's
    ``--init-target`` line, the progress bar on a terminal."""

    def init_target_planned(self, path: str | None) -> None:
        from symfonic_cli.render import escape_inline

        if path is not None:
            self.env.stderr.write(f"symfonic: dry run: --init-target would create {escape_inline(path)} with the SqliteSaver's "
                                  "tables (checkpoints, writes); nothing created\n")
        else:
            self.env.stderr.write("symfonic: dry run: --init-target would run the target saver's setup() on the existing store; nothing changed\n")

    def copying(self, total: int, environment: Environment) -> Copying:
        return _Bar(total, environment)


class _Bar(Copying):
    """Threads, checkpoints and rate on stderr, only when stderr is a terminal."""

    def __init__(self, total: int, environment: Environment) -> None:
        super().__init__(total, environment)
        self.stream = environment.stderr
        self.bar: Any = None  # a rich Progress while shown
        self.checkpoints = 0

    def __enter__(self) -> _Bar:
        from symfonic_cli.render import console, is_terminal

        self.plain = False
        if is_terminal(self.stream) and self.total:
            if self.environment.color_wanted() is False:
                # NO_COLOR / --color never: no escape sequence at all, so no live bar (it moves
                # the cursor with escapes); one line rewritten with carriage returns instead.
                self.plain = True
                return self
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                TextColumn,
                TimeElapsedColumn,
            )
            from rich.progress import Progress as Bar

            self.bar = Bar(
                TextColumn("threads"), BarColumn(), MofNCompleteColumn(),
                TextColumn("{task.fields[checkpoints]} checkpoints, {task.fields[rate]}"), TimeElapsedColumn(),
                console=console(self.environment, self.stream), transient=True,
            )
            self.bar.start()
            self.task = self.bar.add_task("migrate", total=self.total, checkpoints=0, rate="")
        return self

    def advance(self, outcome: Any) -> None:
        super().advance(outcome)
        if self.plain:
            self.checkpoints += outcome.checkpoints_copied + outcome.checkpoints_skipped
            self.done = getattr(self, "done", 0) + 1
            self._line = f"threads {self.done}/{self.total}, {self.checkpoints} checkpoints"
            self.stream.write("\r" + self._line)
            self.stream.flush()
            return
        if self.bar is None:
            return
        self.checkpoints += outcome.checkpoints_copied + outcome.checkpoints_skipped
        elapsed = self.bar.tasks[0].elapsed or 0.0
        done = self.bar.tasks[0].completed + 1
        rate = f"{done / elapsed:.1f} threads/s" if elapsed > 0 else ""
        self.bar.update(self.task, advance=1, checkpoints=self.checkpoints, rate=rate)

    def __exit__(self, *exc: object) -> None:
        if self.plain and getattr(self, "_line", None):
            self.stream.write("\r" + " " * len(self._line) + "\r")  # gone, as the live bar goes
            self.stream.flush()
        if self.bar is not None:
            self.bar.stop()
