"""The command line's Report (changes/report.py): a store-changing run's events rendered on the
Environment's streams, as ``thread erase`` and ``thread prune`` print them (cli/changes_text.py
for erase and sweeps, cli/prune_text.py for prune), and the typed confirmation on this terminal
(cli/confirm.py).

Where each thing goes: the plan to stdout for a reader's formats (text, table); when a confirmation
is asked, to the terminal where the answer is read (stdout may be a file); a line per thread to
stdout for a reader, else to stderr beside the JSON; ``-f json``/``jsonl`` records on stdout as
they come (render/writers.py's ``document_stream``); suggestions, the ``--wait`` line and the progress line on stderr.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from symfonic_cli.environment import Environment
from symfonic_cli.api.runs import Confirmation, Report, RequestView, SweepView, ThreadDone
from symfonic_cli.api.runs import EraseOutcome

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TextIO

    from symfonic_cli.render.writers import DocumentStream
    from symfonic_cli.progress import Progress


class TextReport(Report):
    def __init__(self, env: Environment, fmt: str) -> None:
        from symfonic_cli.render.fit import width_of
        from symfonic_cli.render.writers import is_data

        super().__init__()
        self.env, self.fmt = env, fmt
        self.human = not is_data(fmt)
        self.shows_plan = self.human  # a reader's formats show the plan; JSON streams
        self.streams = not self.human
        self.lines = env.stdout if self.human else env.stderr  # a line per thread for a reader
        self.width = width_of(self.lines)
        self.stream: DocumentStream | None = None
        self._view: Any = None  # a dry run's plan (SweepView or PruneView) while its records stream
        self._plan_width: int | None = None

    # -- the plan and its confirmation

    def opened(self, warnings: Sequence[str]) -> None:
        from symfonic_cli.cli.common import write_warnings

        write_warnings(warnings, self.env.stderr)

    def misses(self, misses: dict[str, Any]) -> None:
        from symfonic_cli.cli.changes_text import suggestion_lines

        suggestion_lines(self.env.stderr, misses)

    def plan(self, view: Any) -> None:
        if self.human:
            self._show(self.env.stdout, view)

    def confirm(self, step: Confirmation) -> None:
        """Shows the plan on the terminal the answer is read from (else, for a reader, on stdout)
        and asks for the count, or the key of the only thread."""
        from symfonic_cli.cli.confirm import confirm, open_terminal

        terminal = open_terminal(self.env, from_stdin=step.from_stdin)
        try:
            out = terminal.writer if terminal is not None else (self.env.stdout if self.human else None)
            if out is not None:
                self._show(out, step.view)
            if not step.threads:  # nothing to delete: nothing to confirm
                return
            confirm(terminal, step)
        finally:
            if terminal is not None:
                terminal.close()

    def _show(self, out: TextIO, view: Any) -> None:
        # Each run's own renderer alone (a prune's plan loads no erase or rewind text).
        if isinstance(view, RequestView):
            from symfonic_cli.cli import changes_text as text

            text.print_plan(out, store_name=view.store_name, plans=view.plans, misses=view.misses, now=view.now,
                            grace=view.grace, fmt=self.fmt, by_prefix=view.by_prefix, env=self.env, extra=view.extra)
            for note in view.notes:
                out.write(f"  note: {note}\n")
        elif isinstance(view, SweepView):
            from symfonic_cli.cli import changes_text as text

            text.print_sweep_plan(out, store_name=view.store_name, selection=view.selection, total=view.total,
                                  batch=view.batch, sample=view.sample, now=view.now, grace=view.grace, env=self.env,
                                  undatable=view.undatable)
        elif view.__class__.__name__ == "PruneView":  # read by name: a rewind loads no prune, an erase none
            from symfonic_cli.cli.prune_text import write_summary

            write_summary(out, view, self.env)
        else:  # a rewind's RewindView
            from symfonic_cli.cli.rewind_text import write_plan

            write_plan(out, view, self.env)

    # -- a dry run, streamed

    def dry_run_begin(self, view: Any, head: dict[str, Any]) -> None:
        from symfonic_cli.render import escape_inline as esc
        from symfonic_cli.render.fit import width_of

        out = self.env.stdout
        self._plan_width = width_of(out) if self.human else None
        if not self.human:
            self._stream(record="plan").begin(head)
        elif isinstance(view, SweepView):
            from symfonic_cli.cli import changes_text as text

            text.sweep_dry_run_head(out, view.store_name, view.selection, view.total, view.batch, self.env, view.undatable)
        else:
            from symfonic_cli.cli.prune_text import plan_head

            out.write(plan_head(view, esc, self._plan_width, self.env))
        self._view = view

    def planned(self, record: dict[str, Any]) -> None:
        from symfonic_cli.render import escape_inline as esc

        if self.stream is not None:
            self.stream.item(record)
        elif isinstance(self._view, SweepView):
            from symfonic_cli.cli.changes_text import plan_line

            self.env.stdout.write(plan_line(record, self._view.grace, self.env, width=self._plan_width) + "\n")
        else:
            from symfonic_cli.cli.prune_text import plan_line as prune_line

            self.env.stdout.write(prune_line(record, esc, self._plan_width) + "\n")

    def dry_run_end(self, view: Any, tail: dict[str, Any]) -> None:
        from symfonic_cli.render import escape_inline as esc

        out = self.env.stdout
        if self.stream is not None:
            self.stream.end(tail)
            return
        if isinstance(view, SweepView):
            from symfonic_cli.api.runs import NOT_ERASED
            from symfonic_cli.cli import changes_text as text

            text.write_fitted(out, [NOT_ERASED], hang="  ")
        else:
            from symfonic_cli.cli.prune_text import plan_notes, plan_totals

            out.write(plan_totals(view.totals, self._plan_width))
            out.write(plan_notes(view.notes, esc, self._plan_width))
        out.write("dry run: nothing deleted\n")

    # -- a real run

    def _stream(self, record: str = "thread") -> DocumentStream:
        from symfonic_cli.render.writers import document_stream

        self.stream = document_stream(self.env.stdout, self.fmt, record)
        return self.stream

    def begin(self, head: dict[str, Any]) -> None:
        if not self.human:
            self._stream().begin(head)

    def thread(self, done: ThreadDone) -> None:
        from symfonic_cli.api.runs import erase_plan

        if isinstance(done.outcome, erase_plan.ThreadOutcome):
            from symfonic_cli.cli.changes_text import thread_line

            line = thread_line(done.outcome, self.width)
        elif done.outcome.__class__.__name__ == "PruneOutcome":  # by name: an erase loads no prune
            from symfonic_cli.cli.prune_text import thread_line as prune_line
            from symfonic_cli.render import escape_inline as esc

            line = prune_line(done.outcome, esc, self.width) + "\n"
        else:  # a rewind's RewindOutcome
            from symfonic_cli.cli.rewind_text import thread_line as rewind_line

            line = rewind_line(done.outcome, self.width)
        self.lines.write(line)
        self.lines.flush()
        if self.stream is not None:
            self.stream.item(done.entry, done.head)

    def end(self, tail: dict[str, Any], line_head: dict[str, Any] | None = None) -> None:
        if self.stream is not None:
            self.stream.end(tail, line_head)

    def ended(self, outcome: EraseOutcome) -> None:
        """A dry run's end (its plan is already shown) or the receipt: a reader's summary and where the
        receipt is kept, else the whole document in a format for a program (render/writers.py)."""
        from symfonic_cli.render.writers import is_data, write_document

        out = self.env.stdout
        if is_data(self.fmt):
            write_document(outcome.document, self.fmt, out)
        elif outcome.dry_run:
            out.write(f"dry run: nothing {'written' if outcome.run == 'rewind' else 'deleted'}\n")
        else:
            from symfonic_cli.cli.changes_text import print_receipt

            print_receipt(out, outcome.document, outcome_line(outcome), outcome.kept_at)
        out.flush()

    @property
    def open(self) -> bool:
        return self.stream is not None and self.stream.open

    # -- the rest

    def waiting(self, holder: str) -> None:
        from symfonic_cli.render import escape_inline as esc

        self.env.stderr.write(f"waiting for {esc(holder)} to finish (--wait)\n")
        self.env.stderr.flush()

    def leftover(self, path: str, error: str | None = None) -> None:
        from symfonic_cli.render import escape_inline as esc, warn

        if error is None:
            self.env.stderr.write(f"symfonic: removed a partial bundle left by an interrupted export: {esc(path)}\n")
        else:
            warn(self.env, f"cannot remove a partial bundle left by an interrupted export: {esc(path)}: {esc(error)}")

    def warning(self, key: str, text: str) -> None:
        from symfonic_cli.render import escape_inline as esc, warn

        warn(self.env, f"{esc(key)}: {esc(text)}")

    def progress(self, verb: str, total: int, enabled: bool | None,
                 told: Callable[[str, int, int], None] | None = None) -> Progress:
        from symfonic_cli.progress import Progress

        return Progress(self.env.stderr, verb, total, enabled=enabled, report=told)

    def flush(self) -> None:
        self.env.stdout.flush()


def outcome_line(outcome: EraseOutcome) -> str:
    """The last line a reader gets: an erase's, a sweep's (with the threads left alone and those
    with recent activity) or a prune's counts."""
    if outcome.run == "prune":
        from symfonic_cli.cli.prune_text import summary_line as prune_line

        return prune_line(outcome.document["summary"])
    if outcome.run == "rewind":
        from symfonic_cli.cli.rewind_text import summary_line as rewind_line

        return rewind_line(outcome.document)
    from symfonic_cli.cli.changes_text import summary_line

    if outcome.run == "erase":
        return summary_line(outcome.document)
    summary = outcome.document["summary"]
    line = summary_line({"summary": summary, "threads": []})
    if summary.get("undatable"):
        line += f"; {summary['undatable']} thread(s) left alone: their activity cannot be dated"
    if outcome.recent:
        line += f"; warning: {outcome.recent} thread(s) had recent activity, a running agent may write them again"
    return line

