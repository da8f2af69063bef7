"""What every screen of the browser shares: the title bar, the footer, store reads in worker threads
(the interface never waits on the database), and what ``y`` copies and ``x`` shows."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Static

from symfonic_cli.browse.text import ERROR_STYLE, inline, plain
from symfonic_cli.errors import SymfonicError

if TYPE_CHECKING:
    from symfonic_cli.browse.source import Source

T = TypeVar("T")


class Bar(Static):
    DEFAULT_CSS = "Bar { height: 1; background: $primary; color: $text; text-wrap: nowrap; text-overflow: ellipsis; }"


class Note(Static):
    """A one-line note under the content (what is loading, how many rows, what was not found)."""

    DEFAULT_CSS = "Note { height: 1; color: $text-muted; text-wrap: nowrap; text-overflow: ellipsis; }"


# The app's keys after the screen's own, in this order. A line too short for all leaves keys out in
# SPARE's order (those the palette or ``?`` reach as well), then from its end; PINNED ones always stay.
APP_KEYS = ("back", "copy", "command", "quit", "help")
SPARE = ("usage", "compat", "command", "sort", "resume", "filter", "mark", "copy")
PINNED = frozenset({"back", "quit", "help"})


class KeyLine(Widget):
    """The footer: the keys that work here (as lazygit shows them), on one line at any width. The
    screen's keys first, then the app's; when they do not fit, the spare ones are left out (``?``
    lists every key). One ``Text``, redrawn when the bindings or the width change (Textual's
    ``Footer`` is a widget a key, cut at the edge and rebuilt at every focus change)."""

    COMPONENT_CLASSES = {"keyline--key"}
    DEFAULT_CSS = """
    KeyLine { height: 1; background: $footer-background; color: $footer-foreground; }
    KeyLine > .keyline--key { color: $footer-key-foreground; text-style: bold; }
    """

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._changed)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _changed(self, _screen: Screen[None]) -> None:
        self.refresh()

    def keys(self) -> list[tuple[str, str, str]]:
        """(binding id, key as shown, description) of every shown key here, in the footer's order."""
        own: list[tuple[str, str, str]] = []
        app: dict[str, tuple[str, str, str]] = {}
        seen: set[str] = set()
        for node, binding, enabled, _tooltip in self.screen.active_bindings.values():
            if not (binding.show and enabled) or binding.action in seen:
                continue
            seen.add(binding.action)
            item = (binding.id or binding.action, self.app.get_key_display(binding), binding.description)
            if node is self.app:
                app[item[0]] = item
            else:
                own.append(item)
        return own + [app[i] for i in APP_KEYS if i in app] + [item for i, item in app.items() if i not in APP_KEYS]

    def fitted(self, width: int) -> list[tuple[str, str, str]]:
        """The keys shown in ``width`` cells: spare ones left out, then unpinned ones from the end."""
        keys = self.keys()

        def cells(items: list[tuple[str, str, str]]) -> int:
            return sum(len(k) + len(d) + 3 for _i, k, d in items)

        order = list(SPARE) + [i for i, _k, _d in reversed(keys) if i not in SPARE and i not in PINNED]
        for name in order:
            if cells(keys) <= width:
                break
            keys = [item for item in keys if item[0] != name]
        return keys

    def render(self) -> Text:
        key_style = self.get_component_rich_style("keyline--key", partial=True)
        out = Text(end="", no_wrap=True, overflow="ellipsis")
        for _id, key, description in self.fitted(self.size.width or 80):
            out.append(" ")
            out.append(key, style=key_style)
            out.append(f" {description} ")
        return out


# Seconds between two refreshes of the ages on a screen (all rows at once).
AGE_TICK = 10.0


class BrowseScreen(Screen[None]):
    """A screen of the browser: ``title()`` for the bar, ``thread_key()`` for ``y``, ``cli_words()``
    for ``x`` (the command printing this view)."""

    def __init__(self) -> None:
        super().__init__()
        self._generation: dict[str, int] = {}
        self._ages_from: datetime | None = None

    def ages_from(self) -> datetime:
        """The instant every age on this screen is measured from (on the app's thread): one for all
        rows, moved on for all of them at once every AGE_TICK seconds. Each row's own clock made a
        row drawn later (the cursor's) younger than the rows above it in a list by activity."""
        if self._ages_from is None:
            self._ages_from = self.source.now()
            self.set_interval(AGE_TICK, self._tick_ages)
        return self._ages_from

    def _tick_ages(self) -> None:
        from symfonic_cli.browse.itemlist import ItemList

        self.new_ages()
        for items in self.query(ItemList):
            items.redraw()

    def new_ages(self) -> None:
        """Ages from now on (new rows are drawn whole: all of them from the same instant)."""
        if self._ages_from is not None:
            self._ages_from = self.source.now()

    @property
    def browse(self) -> Any:
        """The BrowseApp (``browse/app.py``, which imports the screens: not imported back here)."""
        return self.app

    @property
    def source(self) -> Source:
        return self.browse.source

    def heading(self) -> str:
        return ""

    def thread_key(self) -> str | None:
        return None

    def cli_words(self) -> list[str]:
        return []

    def go_back(self) -> bool:
        """Esc inside the screen (close a search line, leave hits); False: Esc leaves the screen."""
        return False

    def compose_bar(self) -> ComposeResult:
        yield Bar(self._bar_text(), id="bar")

    def compose_footer(self) -> ComposeResult:
        yield Note("", id="note")
        yield KeyLine(id="keys")

    def _bar_text(self) -> Text:
        return plain((f" {self.heading()} ", "bold"), f" {inline(self.source.location)}")

    def refresh_bar(self) -> None:
        self.query_one("#bar", Bar).update(self._bar_text())

    def note(self, text: str | Text) -> None:
        self.query_one("#note", Note).update(Text(text, end="") if isinstance(text, str) else text)

    def read(self, what: Callable[[], T], then: Callable[[T], None], *, group: str = "load", busy: str = "reading ...") -> None:
        """Run ``what`` (a store read) in a worker thread and hand its result to ``then`` on the
        interface's thread; a newer read of the same group makes an older one's result moot."""
        generation = self._generation.get(group, 0) + 1
        self._generation[group] = generation
        if busy:
            self.note(busy)

        def job() -> None:
            try:
                result = what()
            except SymfonicError as exc:
                self._deliver(group, generation, self._failed, exc.line())
                return
            except Exception as exc:  # never a traceback on the screen: one line, as the CLI says it
                self._deliver(group, generation, self._failed, f"unexpected {type(exc).__name__}: {exc}")
                return
            self._deliver(group, generation, then, result)

        self.run_worker(job, thread=True, group=group, exit_on_error=False)

    def _deliver(self, group: str, generation: int, then: Callable[[Any], None], value: Any) -> None:
        def on_ui() -> None:
            if self._generation.get(group) == generation and self.is_attached:
                then(value)

        try:
            self.app.call_from_thread(on_ui)
        except RuntimeError:
            pass  # the app has ended meanwhile

    def _failed(self, line: str) -> None:
        self.note(plain(("error: ", ERROR_STYLE), inline(line)))
        self.app.notify(inline(line), severity="error", markup=False)


class TextScreen(BrowseScreen):
    """A screen showing one scrollable text (state, diff, compat report, usage, help)."""

    DEFAULT_CSS = "TextScreen #body { height: 1fr; } TextScreen #body > Static { width: 1fr; }"

    def compose(self) -> ComposeResult:
        yield from self.compose_bar()
        with VerticalScroll(id="body"):
            yield Static(Text(""), id="content")
        yield from self.compose_footer()

    def on_mount(self) -> None:
        self.query_one("#body", VerticalScroll).focus()
        self.load()

    def load(self) -> None:
        """Start the read of what this screen shows."""

    def show(self, text: Text, note: str = "") -> None:
        self.query_one("#content", Static).update(text)
        self.note(note)
