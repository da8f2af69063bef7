"""One thread's screens: the transcript (``transcript show``), its run state (``thread show``), its
checkpoints (``thread history``) and what changed between two (``thread diff``)."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Input

from symfonic_cli.browse.base import BrowseScreen, TextScreen
from symfonic_cli.browse.itemlist import ItemList, Wrapped, wrap
from symfonic_cli.browse.text import ROLE_STYLE, STATUS_STYLE, block, inline, pairs, plain, shown_age


class ThreadScreen(BrowseScreen):
    """A screen about one thread: ``y`` copies its key; ``s``/``h`` open its state and history."""

    def __init__(self, key: str) -> None:
        super().__init__()
        self.key = key

    def thread_key(self) -> str | None:
        return self.key

    def store_words(self) -> list[str]:
        return ["--store", self.browse.store_word(), "--thread", self.key]

    def action_state(self) -> None:
        self.app.push_screen(StateScreen(self.key))

    def action_history(self) -> None:
        self.app.push_screen(HistoryScreen(self.key))


class TranscriptScreen(ThreadScreen):
    BINDINGS = [
        Binding("t", "tools", "tools", id="tools"),
        Binding("r", "resume", "resume", id="resume"),
        Binding("slash", "find", "find", id="find"),
        Binding("n", "next", "next match", id="next", show=False),
        Binding("s", "state", "state", id="state"),
        Binding("h", "history", "history", id="history"),
    ]
    DEFAULT_CSS = "TranscriptScreen #find { dock: bottom; display: none; } TranscriptScreen #find.open { display: block; }"

    def __init__(self, key: str, *, land_index: int | None = None, land_id: str | None = None, tools: bool = False) -> None:
        super().__init__(key)
        self.land_index, self.land_id = land_index, land_id
        self.tools = tools
        self.rows: list[Any] = []
        self.finding = ""

    def heading(self) -> str:
        return f"transcript {inline(self.key)}" + (" (tools)" if self.tools else "")

    def cli_words(self) -> list[str]:
        return ["transcript", "show", *self.store_words(), *(["--tools"] if self.tools else [])]

    def compose(self) -> ComposeResult:
        yield from self.compose_bar()
        yield ItemList(wrapped=True, id="rows")
        yield Input(placeholder="find in the transcript (Enter; n finds the next)", id="find")
        yield from self.compose_footer()

    def on_mount(self) -> None:
        self.query_one(ItemList).focus()
        self.load()

    def load(self) -> None:
        key, tools, items = self.key, self.tools, self.query_one(ItemList)

        def rows_and_lines() -> tuple[list[Any], Wrapped]:
            # Decoded and wrapped here in the worker (at the width the list has then): the interface
            # only swaps the lines in, however long the thread (a 500-turn one is 1,250 rows).
            rows = self.source.transcript(key, tools=tools)
            return rows, wrap(rows, lambda row, width: self._draw(row, width, tools), items.width())

        self.read(rows_and_lines, self._loaded, busy="reading the transcript ...")

    def _loaded(self, read: tuple[list[Any], Wrapped]) -> None:
        rows, wrapped = read
        items = self.query_one(ItemList)
        landing = items.cursor if self.rows else 0
        if self.land_id is not None or self.land_index is not None:
            landing = next((i for i, r in enumerate(rows) if self.land_id is not None and r.message_id == self.land_id),
                           next((i for i, r in enumerate(rows) if r.index == self.land_index), 0))
            self.land_id = self.land_index = None
        self.rows = rows
        self.refresh_bar()
        tools = self.tools
        items.show(rows, lambda row, width: self._draw(row, width, tools), cursor=landing,
                   empty=Text("the thread holds no messages", end=""), wrapped=wrapped)
        self.note(f"{len(rows)} messages; tool calls {'shown' if tools else 'hidden'} (t)")

    def _draw(self, row: Any, width: int, tools: bool) -> list[Text]:
        from symfonic_cli.render import shown_time

        when = shown_time(row.timestamp, self.browse.environment)
        head = plain((f"[{row.index}] ", "bold"), (inline(row.role), ROLE_STYLE.get(row.role, "bold")),
                     f"  {inline(when) if when else '-'}  ({shown_age(row.timestamp, self.source.now())})")
        lines = [head]
        body = Text(block(row.content or ""), end="")
        body.expand_tabs(4)
        lines.extend(body.wrap(self.app.console, max(1, width - 2)) if row.content else [])
        if tools:
            from symfonic_cli.render import tool_lines

            for tool_line in tool_lines(row):
                lines.extend(Text(block(tool_line), style="magenta", end="").wrap(self.app.console, max(1, width - 2)))
        out = [lines[0]]
        for line in lines[1:]:
            shifted = Text("  ", end="")
            shifted.append_text(line)
            out.append(shifted)
        out.append(Text(""))
        return out

    def action_tools(self) -> None:
        self.tools = not self.tools
        current = self.rows[self.query_one(ItemList).cursor] if self.rows else None
        if current is not None:
            self.land_id = current.message_id
        self.load()

    def action_resume(self) -> None:
        key = self.key

        def shown(window: list[Any]) -> None:
            self.app.push_screen(ResumeScreen(key, window))

        self.read(lambda: self.source.resume_window(key), shown, busy="reading the restart-resume window ...")

    def action_find(self) -> None:
        find = self.query_one("#find", Input)
        find.add_class("open")
        find.focus()

    def on_input_submitted(self, message: Input.Submitted) -> None:
        self.finding = message.value
        self.go_back()
        self.action_next()

    def action_next(self) -> None:
        if not self.finding or not self.rows:
            return
        items = self.query_one(ItemList)
        wanted = self.finding.casefold()
        n = len(self.rows)
        for step in range(1, n + 1):
            i = (items.cursor + step) % n
            if wanted in (self.rows[i].content or "").casefold():
                items.set_cursor(i)
                self.note(inline(f"'{self.finding}' in message [{self.rows[i].index}]"))
                return
        self.note(inline(f"'{self.finding}' is not in this transcript"))

    def go_back(self) -> bool:
        find = self.query_one("#find", Input)
        if find.has_class("open"):
            find.remove_class("open")
            self.query_one(ItemList).focus()
            return True
        return False


class ResumeScreen(ThreadScreen):
    """``r``: what a restarted run recalls (``Store.resume_window``: symfonic-core's restart-resume)."""

    def __init__(self, key: str, window: list[Any]) -> None:
        super().__init__(key)
        self.window = window

    def heading(self) -> str:
        return f"resume window {inline(self.key)}"

    def compose(self) -> ComposeResult:
        yield from self.compose_bar()
        yield ItemList(wrapped=True, id="rows")
        yield from self.compose_footer()

    def on_mount(self) -> None:
        items = self.query_one(ItemList)
        empty = "a restart recalls nothing here (transcript show --resume-window says why: x shows it)"
        items.show(self.window, self._draw, empty=Text(empty, end=""))
        items.focus()
        self.note(f"{len(self.window)} entries, oldest first")

    def _draw(self, entry: Any, width: int) -> list[Text]:
        head = plain((inline(entry.speaker), ROLE_STYLE.get(entry.speaker, "bold")), f"  turn {inline(entry.turn_id or '-')}  ",
                     shown_age(entry.timestamp, self.source.now()))
        body = Text(block(entry.content or ""), end="").wrap(self.app.console, max(1, width - 2))
        return [head, *[Text("  ", end="") + line for line in body], Text("")]


class StateScreen(ThreadScreen, TextScreen):
    BINDINGS = [Binding("h", "history", "history", id="history")]

    def heading(self) -> str:
        return f"state {inline(self.key)}"

    def cli_words(self) -> list[str]:
        return ["thread", "show", *self.store_words()]

    def load(self) -> None:
        key = self.key
        self.read(lambda: self.source.state(key), self._shown, busy="reading the run state ...")

    def _shown(self, state: Any) -> None:
        out = plain((f"{'status':<18} ", "bold"), (inline(state.status), STATUS_STYLE.get(state.status, "")))
        out.append("\n")
        out.append_text(pairs([("next", ", ".join(map(inline, state.next)) or "-"), ("checkpoint", state.checkpoint_id),
                               ("step", state.step), ("source", state.source), ("checkpoints", state.checkpoints),
                               ("messages", state["messages"]), ("last activity", state.last_activity)]))
        for i in state.interrupts:
            value = i.get("value")
            question = value.get("question", value) if isinstance(value, dict) else value
            out.append("\n\ninterrupt at ", style="bold yellow")
            out.append(inline(i.get("node") or "-"))
            out.append("\n  ")
            out.append(inline(question))
        for e in state.errors:
            out.append("\n\nerror in ", style="bold red")
            out.append(inline(e.get("node") or "-"))
            out.append("\n  ")
            out.append(block(str(e.get("error"))))
        namespaces = [n for n in state.namespaces if n.get("namespace")]
        for n in namespaces:
            out.append("\n\nnamespace ", style="bold")
            out.append(inline(n["namespace"]))
            out.append(f"  {inline(n.get('status'))}  next {', '.join(map(inline, n.get('next') or [])) or '-'}")
        self.show(out, f"{len(state.interrupts)} interrupts, {len(state.errors)} errors")


class HistoryScreen(ThreadScreen):
    BINDINGS = [
        Binding("space", "mark", "mark", id="mark"),
        Binding("d", "diff", "diff", id="diff"),
        Binding("s", "state", "state", id="state"),
    ]

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.entries: list[Any] = []
        self.marked: list[str] = []

    def heading(self) -> str:
        return f"history {inline(self.key)}"

    def cli_words(self) -> list[str]:
        return ["thread", "history", *self.store_words()]

    def compose(self) -> ComposeResult:
        yield from self.compose_bar()
        yield ItemList(id="rows")
        yield from self.compose_footer()

    def on_mount(self) -> None:
        self.query_one(ItemList).focus()
        key = self.key
        self.read(lambda: self.source.history(key), self._loaded, busy="reading the checkpoints ...")

    def _loaded(self, entries: list[Any]) -> None:
        self.entries = entries
        self.query_one(ItemList).show(entries, self._draw, empty=Text("no checkpoints", end=""))
        self.note(f"{len(entries)} checkpoints, newest first; d diffs with the parent, space marks two")

    def _draw(self, e: Any, width: int) -> Text:
        writers = ",".join(dict.fromkeys(inline(w.label) for w in e.writes)) or "-"
        marks = " ".join(inline(m) for m in e.marks)
        mark = "*" if e.checkpoint_id in self.marked else " "
        ns = f" {inline(e.checkpoint_ns)}" if e.checkpoint_ns else ""
        return plain((mark, "bold yellow"), inline(e.checkpoint_id), f" {e.step if e.step is not None else '-':>4} ",
                     f"{inline(e.source or '-'):<6} ", (writers, "cyan"), (f" {marks}" if marks else "", "bold yellow"), ns)

    def _current(self) -> Any | None:
        items = self.query_one(ItemList)
        return self.entries[items.cursor] if self.entries else None

    def action_mark(self) -> None:
        e = self._current()
        if e is None:
            return
        if e.checkpoint_id in self.marked:
            self.marked.remove(e.checkpoint_id)
        else:
            self.marked = [*self.marked[-1:], e.checkpoint_id]
        self.query_one(ItemList).redraw()
        self.note(f"{len(self.marked)} marked" + ("; d diffs them" if len(self.marked) == 2 else ""))

    def action_diff(self) -> None:
        if len(self.marked) == 2:
            by_age = {e.checkpoint_id: i for i, e in enumerate(self.entries)}
            older, newer = sorted(self.marked, key=lambda c: -by_age.get(c, 0))
            self.app.push_screen(DiffScreen(self.key, older, newer))
            return
        e = self._current()
        if e is None:
            return
        if not e.parent_checkpoint_id:
            self.note("the first checkpoint has no parent: mark two with space to diff them")
            return
        self.app.push_screen(DiffScreen(self.key, e.parent_checkpoint_id, e.checkpoint_id))


class DiffScreen(ThreadScreen, TextScreen):
    def __init__(self, key: str, a: str, b: str) -> None:
        super().__init__(key)
        self.a, self.b = a, b

    def heading(self) -> str:
        return f"diff {inline(self.key)}"

    def cli_words(self) -> list[str]:
        return ["thread", "diff", *self.store_words(), self.a, self.b]

    def load(self) -> None:
        key, a, b = self.key, self.a, self.b
        self.read(lambda: self.source.diff(key, a, b), self._shown, busy="comparing ...")

    def _shown(self, diff: Any) -> None:
        doc = diff.to_json()
        out = pairs([("from", doc["from"]["checkpoint_id"]), ("to", doc["to"]["checkpoint_id"])], width=8)
        for what in ("added", "removed", "changed"):
            names = doc["channels"][what]
            out.append(f"\nchannels {what:<8}", style="bold")
            out.append(", ".join(map(inline, names)) or "-")
        for what, style in (("added", "green"), ("removed", "red"), ("edited", "yellow")):
            for m in doc["messages"][what]:
                out.append(f"\n\n{what} ", style=f"bold {style}")
                out.append(f"{inline(m.get('role') or '-')}  ")
                out.append(block(m["content"] if isinstance(m.get("content"), str) else inline(m.get("content"))))
        for v in doc["values"]:
            out.append("\n\nvalue ", style="bold")
            out.append(inline(v["channel"]))
            out.append(f"\n  before {inline(v['before'])}\n  after  {inline(v['after'])}")
        self.show(out, f"{len(doc['messages']['added'])} messages added, {len(doc['messages']['removed'])} removed")
