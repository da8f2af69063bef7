"""``symfonic browse``: the Textual app, its keys everywhere, the ``:`` palette and the keys the
config file rebinds (``[browse.keys]``, by the ids shown in ``?``)."""

from __future__ import annotations

import gc
from collections.abc import Iterable
from functools import partial
from typing import Any

from textual.app import App
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider

from symfonic_cli.browse.base import BrowseScreen
from symfonic_cli.browse.source import BROWSE_SORTS, Source
from symfonic_cli.browse.text import command_line, inline
from symfonic_cli.errors import UsageError
from symfonic_cli.vocabulary import STATUSES


class BrowseCommands(Provider):
    """``:``: the views and filters by name."""

    def _commands(self) -> list[tuple[str, Any, str]]:
        app: BrowseApp = self.app  # type: ignore[assignment]
        out: list[tuple[str, Any, str]] = [
            ("threads", app.action_threads, "the thread listing"),
            ("compat report", app.action_compat, "the compatibility envelopes (c)"),
            ("store usage", app.action_usage, "where the bytes are (u)"),
            ("keys", app.action_help, "every key (?)"),
            ("command", app.action_command, "the CLI command printing this view (x)"),
            ("quit", app.action_quit, "leave the browser (q)"),
        ]
        out += [(f"status {s}", partial(app.filter_status, (s,)), f"threads whose run state is {s}") for s in STATUSES]
        out += [("all statuses", partial(app.filter_status, ()), "no status filter")]
        out += [(f"sort by {s}", partial(app.sort_by, s), f"order the listing by {s}") for s in BROWSE_SORTS]
        return out

    async def discover(self) -> Hits:
        for name, run, help_text in self._commands():
            yield DiscoveryHit(name, run, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, run, help_text in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), run, help=help_text)


class BrowseApp(App[None]):
    TITLE = "symfonic browse"
    COMMANDS = {BrowseCommands}
    ENABLE_COMMAND_PALETTE = True
    COMMAND_PALETTE_BINDING = "ctrl+p"
    BINDINGS = [
        Binding("q", "quit", "quit", id="quit"),
        Binding("escape", "leave", "back", id="back"),
        Binding("question_mark", "help", "help", id="help"),
        Binding("y", "copy", "copy", id="copy"),
        Binding("x", "command", "command", id="command"),
        Binding("colon", "command_palette", "palette", id="palette", show=False),
        Binding("c", "compat", "compat", id="compat", show=False),
        Binding("u", "usage", "usage", id="usage", show=False),
    ]

    def __init__(self, source: Source, *, environment: Any = None, keymap: dict[str, str] | None = None) -> None:
        super().__init__()
        from symfonic_cli.environment import Environment

        self.source = source
        self.environment = environment or Environment()
        self._keymap = keymap or {}
        self.theme = "textual-dark"

    failure: Exception | None = None
    _gc_threshold: tuple[int, int, int] = (700, 10, 10)

    def _handle_exception(self, error: Exception) -> None:
        # A bug of ours while drawing: the command line reports it as every command does (one
        # line, exit 1, the traceback with --debug), not as Textual's full-screen traceback.
        if self.failure is None:
            self.failure = error
        if self.is_headless:  # under test: Textual's own handling re-raises it in the test
            super()._handle_exception(error)
            return
        self.exit(return_code=1)

    def on_mount(self) -> None:
        from symfonic_cli.browse.threads import ThreadsScreen

        # A key's latency: the listing of a large store is some 100,000 long-lived objects, and the
        # collector's full passes over them took up to 0.4 s in the middle of a key (20,000 threads).
        # Fewer full passes while browsing, and each whole listing frozen out of them
        # (``keep_listing``); both undone when the app ends (objects are still freed when unused).
        self._gc_threshold = gc.get_threshold()
        gc.set_threshold(self._gc_threshold[0], self._gc_threshold[1], max(self._gc_threshold[2], 100))
        if self._keymap:
            self.set_keymap(self._keymap)
        self.push_screen(ThreadsScreen())

    def on_unmount(self) -> None:
        gc.unfreeze()
        gc.set_threshold(*self._gc_threshold)

    def keep_listing(self) -> None:
        """A whole listing arrived: what exists now is long-lived, out of the collector's passes."""
        gc.freeze()

    def store_word(self) -> str:
        """The ``--store`` of the commands ``x`` shows: as it was given, the password masked."""
        from symfonic_cli.location import mask_url

        return mask_url(self.source.store_arg) if self.source.store_arg else self.source.location

    # -- everywhere

    def _browse_screen(self) -> BrowseScreen | None:
        screen = self.screen
        return screen if isinstance(screen, BrowseScreen) else None

    def action_leave(self) -> None:
        """Esc: close what is open inside the screen, else back to the screen before (never past the threads)."""
        from symfonic_cli.browse.threads import ThreadsScreen

        screen = self._browse_screen()
        if screen is not None and screen.go_back():
            return
        if screen is not None and not isinstance(screen, ThreadsScreen) and len(self.screen_stack) > 2:
            self.pop_screen()

    def action_help(self) -> None:
        from symfonic_cli.browse.panels import HelpScreen

        self.push_screen(HelpScreen(self.screen))

    def action_copy(self) -> None:
        screen = self._browse_screen()
        key = screen.thread_key() if screen is not None else None
        if key is None:
            self.notify("no thread key here to copy", severity="warning", markup=False)
            return
        self.copy_to_clipboard(key)  # OSC 52: the terminal's clipboard, over SSH too
        self.notify(f"copied {inline(key)}", markup=False)

    def action_command(self) -> None:
        from symfonic_cli.browse.panels import CommandScreen

        screen = self._browse_screen()
        words = screen.cli_words() if screen is not None else []
        if not words:
            self.notify("this view has no command of its own", severity="warning", markup=False)
            return
        self.push_screen(CommandScreen(command_line(words)))

    def action_compat(self) -> None:
        from symfonic_cli.browse.panels import CompatScreen

        self.push_screen(CompatScreen())

    def action_usage(self) -> None:
        from symfonic_cli.browse.panels import UsageScreen

        self.push_screen(UsageScreen())

    def action_threads(self) -> None:
        while len(self.screen_stack) > 2:
            self.pop_screen()

    def _threads(self) -> Any:
        from symfonic_cli.browse.threads import ThreadsScreen

        self.action_threads()
        return next(s for s in self.screen_stack if isinstance(s, ThreadsScreen))

    def filter_status(self, statuses: tuple[str, ...]) -> None:
        threads = self._threads()
        threads.filters = threads.filters.with_(status=statuses)
        threads.load()

    def sort_by(self, sort: str) -> None:
        threads = self._threads()
        threads.filters = threads.filters.with_(sort=sort)
        threads.load()


def binding_ids() -> set[str]:
    """Every key binding's id: what ``[browse.keys]`` may rebind."""
    from symfonic_cli.browse.itemlist import ItemList
    from symfonic_cli.browse.panels import CommandScreen
    from symfonic_cli.browse.thread import HistoryScreen, StateScreen, TranscriptScreen
    from symfonic_cli.browse.threads import ThreadsScreen

    holders: Iterable[Any] = (BrowseApp, ThreadsScreen, TranscriptScreen, StateScreen, HistoryScreen, ItemList, CommandScreen)
    return {b.id for h in holders for b in h.BINDINGS if isinstance(b, Binding) and b.id}


def keymap_from_config(config: dict[str, Any]) -> dict[str, str]:
    """``[browse.keys]`` of the config file: binding id = "key" or "key1,key2" (exit 2 when wrong)."""
    section = config.get("browse", {})
    if not isinstance(section, dict):
        raise UsageError("config file: [browse] is not a table")
    keys = section.get("keys", {})
    if not isinstance(keys, dict):
        raise UsageError("config file: [browse.keys] is not a table")
    known = binding_ids()
    out = {}
    for name, value in keys.items():
        if name not in known:
            raise UsageError(f"config file: [browse.keys] has no key '{inline(name)}'",
                             hint=f"use any of: {', '.join(sorted(known))}")
        if not isinstance(value, str) or not value.strip() or any(not k.strip() for k in value.split(",")):
            raise UsageError(f"config file: [browse.keys] {inline(name)} must be a key or a comma list of keys")
        out[name] = ",".join(k.strip() for k in value.split(","))
    return out
