"""The first screen: the store's threads (``threads list``), filtered and sorted, and content search
hits (``threads search``). Statuses and first messages arrive after the rows (their own reads)."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Input, Label

from symfonic_cli.browse.base import BrowseScreen
from symfonic_cli.browse.itemlist import ItemList
from symfonic_cli.browse.source import BROWSE_SORTS, FIRST_PAGE, NEXT_PAGE, Filters, Listing, ThreadRow
from symfonic_cli.browse.text import STATUS_STYLE, first_line, inline, plain, shown_age
from symfonic_cli.vocabulary import STATUSES, listed

STATUS_WIDTH = max(len(s) for s in STATUSES)


class ColumnHeads(Widget):
    """The line above the rows naming their columns, laid out as the rows are (ThreadsScreen.column_heads)."""

    DEFAULT_CSS = "ColumnHeads { height: 1; color: $text-muted; text-style: bold; text-wrap: nowrap; }"

    def render(self) -> Text:
        screen = self.screen
        return screen.column_heads() if isinstance(screen, ThreadsScreen) else Text("")


class ThreadsScreen(BrowseScreen):
    BINDINGS = [
        Binding("slash", "search", "search", id="search"),
        Binding("f", "filter", "filter", id="filter"),
        Binding("o", "sort", "sort", id="sort"),
        Binding("s", "state", "state", id="state"),
        Binding("h", "history", "history", id="history"),
        Binding("c", "compat", "compat", id="compat"),
        Binding("u", "usage", "usage", id="usage"),
    ]
    DEFAULT_CSS = "ThreadsScreen #find { dock: bottom; display: none; } ThreadsScreen #find.open { display: block; }"

    def __init__(self, filters: Filters | None = None) -> None:
        super().__init__()
        self.filters = filters or Filters()
        self.listing: Listing | None = None
        self.hits: list[Any] | None = None  # search hits shown instead of the listing
        self.query_text = ""
        self._key_width = 20
        self._reading = 0  # the rows a background read of the listing asks for (0: none)
        # The listing's next page waits for the run state and first messages of the rows on the
        # screen: its read takes the store's turn for as long as the page query (seconds at a
        # million threads), and those columns would wait behind it.
        self._next_after_screen: Filters | None = None
        self._screen_reads: set[str] = set()  # the groups of the screen's reads not yet back

    def heading(self) -> str:
        if self.hits is not None:
            return f"search '{inline(self.query_text)}'"
        return "threads"

    def compose(self) -> ComposeResult:
        yield from self.compose_bar()
        yield ColumnHeads(id="columns")
        yield ItemList(id="rows")
        yield Input(placeholder="search message content (Enter; Esc cancels)", id="find")
        yield from self.compose_footer()

    def on_mount(self) -> None:
        self.query_one(ItemList).focus()
        self.load()

    # -- reading

    def load(self) -> None:
        """The first screenful first (the database aggregates every thread either way, but only
        these become rows), then the whole listing; the key order needs every row at once."""
        filters = self.filters
        if filters.sort == "key":
            self.read(lambda: self.source.threads(filters), self._listed, busy="reading the threads ...")
            return
        # The first screen's read may have started before the app (cli/browse.py: Source.read_early).
        self.read(lambda: self.source.early(filters) or self.source.threads(filters, limit=FIRST_PAGE), self._first_page,
                  busy="reading the threads ...")

    def _first_page(self, listing: Listing) -> None:
        # The next page once the first screen is drawn and its columns read (_screen_read).
        self._next_after_screen = None if listing.complete else listing.filters
        self._listed(listing)

    def _screen_read(self, group: str) -> None:
        """A read for the rows on the screen is back: the listing's next page when none is left."""
        self._screen_reads.discard(group)
        if self._screen_reads:
            return
        if self._next_after_screen is not None:
            filters, self._next_after_screen = self._next_after_screen, None
            self._rest(filters, NEXT_PAGE)
        self._near_end()

    def _rest(self, filters: Filters, limit: int) -> None:
        """The listing's first ``limit`` rows (a page more than shown), read in the background."""
        if self.filters == filters and self.listing is not None and self.listing.filters == filters and not self.listing.complete:
            self._reading = limit
            self._next_after_screen = None  # read now (the cursor neared the end): not again
            self.read(lambda: self.source.threads(filters, limit=limit, background=True), self._more, busy="")

    def _more(self, listing: Listing) -> None:
        self._reading = 0
        self._listed(listing)

    def _near_end(self) -> None:
        """The last row read on the screen: the next page (four times as many rows in all)."""
        listing = self.listing
        if listing is None or listing.complete or self._reading or self.hits is not None:
            return
        items = self.query_one(ItemList)
        shown = items.on_screen()
        if max(items.cursor + 1, shown.stop) >= len(listing.rows):
            self._rest(listing.filters, len(listing.rows) * 4)

    def _listed(self, listing: Listing) -> None:
        items = self.query_one(ItemList)
        # The whole listing after its first page: the cursor stays on its thread.
        was = self._current() if self.listing is not None and self.listing.filters == listing.filters else None
        self.listing, self.hits = listing, None
        rows = listing.rows
        for row in rows[:FIRST_PAGE]:
            row.first = row.first or self.source.known_first(row.key)
        self._key_width = max((len(inline(r.key)) for r in rows), default=10)
        self.refresh_bar()
        cursor = next((i for i, r in enumerate(rows) if r.key == was), 0) if was is not None else 0
        self.new_ages()
        items.show(rows, self._draw_thread, cursor=cursor, empty=Text(self._empty_text(), end=""))
        self.query_one(ColumnHeads).refresh()
        if listing.complete:
            self.note(self._summary())
            self.browse.keep_listing()
        elif len(rows) <= FIRST_PAGE:
            self.note(f"the first {len(rows)} threads; reading the others ...")
        else:  # the total is not counted: that would read every thread
            self.note(f"the first {len(rows):,} threads (more as you scroll)")
        # Once the rows are drawn (the reads would compete with the drawing), for the rows shown.
        self.call_after_refresh(self._load_on_screen)

    def _load_on_screen(self) -> None:
        started = {"status": self._load_statuses(), "first": self._load_first()}
        self._screen_reads = {group for group, read in started.items() if read}
        self._screen_read("")  # none started: the next page now

    def _load_statuses(self) -> bool:
        """The run state of the rows on the screen (only those: the list may be a million);
        whether a read was started."""
        if self.listing is None or self.hits is not None or self.listing.statuses_known:
            return False
        items = self.query_one(ItemList)
        rows = self.listing.rows
        for i in items.on_screen():
            rows[i].status = rows[i].status or self.source.known_status(rows[i].key)
        wanted = [rows[i].key for i in items.on_screen() if rows[i].status is None]
        if wanted:
            self.read(lambda: self.source.statuses(wanted), self._statuses, group="status", busy="")
        return bool(wanted)

    def _statuses(self, statuses: dict[str, str | None]) -> None:
        if self.listing is not None:
            for row in self.listing.rows:
                if row.key in statuses:
                    row.status = statuses[row.key]
            self.query_one(ItemList).redraw()
        self._screen_read("status")

    def _load_first(self) -> bool:
        """The first user message of the rows on the screen (only those: the list may be 20,000);
        whether a read was started."""
        if self.listing is None or self.hits is not None:
            return False
        items = self.query_one(ItemList)
        rows = self.listing.rows
        wanted = [rows[i].key for i in items.on_screen() if rows[i].first is None]
        if wanted:
            self.read(lambda: self.source.first_messages(wanted), self._firsts, group="first", busy="")
        return bool(wanted)

    def _firsts(self, firsts: dict[str, str | None]) -> None:
        if self.listing is not None:
            for row in self.listing.rows:
                if row.key in firsts:
                    row.first = firsts[row.key] or ""
            self.query_one(ItemList).redraw()
        self._screen_read("first")

    def on_item_list_moved(self, _message: ItemList.Moved) -> None:
        self._load_on_screen()

    def _failed(self, line: str) -> None:
        super()._failed(line)
        # A read of the screen's columns that failed holds the listing's next page back no more.
        self._screen_reads.clear()
        self._screen_read("")

    def _summary(self) -> str:
        n = len(self.listing.rows) if self.listing else 0
        f = self.filters
        given = [f"{name} {value}" for name, value in (
            ("tenant", f.tenant), ("sub-tenant", f.sub_tenant), ("status", ",".join(f.status) or None),
            ("active within", f.active_within), ("inactive for", f.inactive_for)) if value]
        return inline(f"{n} threads, by {f.sort}" + (f"; {', '.join(given)}" if given else ""))

    def _empty_text(self) -> str:
        return "no threads match the filter (f changes it)" if self.filters != Filters(sort=self.filters.sort) else "the store holds no threads"

    # -- drawing

    def _key_column(self, width: int) -> int:
        return min(self._key_width, max(12, width - 30))

    def column_heads(self) -> Text:
        """What the rows' columns hold: the listing's (as ``_draw_thread`` lays them out) or a hit's."""
        if self.hits is not None:
            return plain("key  [index] role  age  the text around the match")
        width = self.query_one(ItemList).width()
        return plain("key".ljust(self._key_column(width)), "  ", "status".ljust(STATUS_WIDTH), "age".rjust(6),
                     "ckpts".rjust(6), "  ", "first message")

    def _draw_thread(self, row: ThreadRow, width: int) -> Text:
        key_width = self._key_column(width)
        status = row.status or ""
        head = plain(inline(row.key).ljust(key_width), "  ", (status.ljust(STATUS_WIDTH), STATUS_STYLE.get(status, "")),
                     shown_age(row.last_activity, self.ages_from()).rjust(6), f"{row.checkpoints:>6}", "  ")
        room = width - head.cell_len
        if room > 3 and row.first:
            head.append(first_line(row.first, room), style="dim" if row.first is None else "")
        return head

    def _draw_hit(self, hit: Any, width: int) -> Text:
        return plain(inline(hit.key), "  ", (f"[{hit.index}] {inline(hit.role)}", "bold"), "  ",
                     shown_age(hit.timestamp, self.ages_from()), "  ", first_line(hit.snippet, width))

    # -- keys

    def _current(self) -> str | None:
        items = self.query_one(ItemList)
        if not items.items:
            return None
        return items.items[items.cursor].key

    def thread_key(self) -> str | None:
        return self._current()

    def cli_words(self) -> list[str]:
        where = ["--store", self.browse.store_word()]
        f = self.filters
        scope = [w for name, value in (("--tenant", f.tenant), ("--sub-tenant", f.sub_tenant),
                                       ("--active-within", f.active_within), ("--inactive-for", f.inactive_for))
                 if value for w in (name, value)]
        if self.hits is not None:
            return ["threads", "search", *where, *scope, self.query_text]
        words = ["threads", "list", *where, *scope, "--status", ",".join(f.status or STATUSES)]
        if f.sort == "size":
            words += ["--sort", "size"]
        return [*words, "--columns", "key,status,last_activity,checkpoints,first"]

    def on_item_list_chosen(self, message: ItemList.Chosen) -> None:
        from symfonic_cli.browse.thread import TranscriptScreen

        item = message.item_list.items[message.index]
        if self.hits is not None:
            # A hit in a tool call or result opens the transcript with them shown, to land on it.
            tools = item.role == "tool" or item.field != "content"
            self.app.push_screen(TranscriptScreen(item.key, land_index=item.index, land_id=item.message_id, tools=tools))
        else:
            self.app.push_screen(TranscriptScreen(item.key))

    def action_search(self) -> None:
        find = self.query_one("#find", Input)
        find.add_class("open")
        find.focus()

    def on_input_submitted(self, message: Input.Submitted) -> None:
        if message.input.id != "find":
            return
        text = message.value
        self._close_find()
        if not text:
            return
        self.query_text = text
        filters = self.filters
        self.read(lambda: self.source.search(text, filters), self._found, busy=f"searching for '{inline(text)}' ...")

    def _close_find(self) -> None:
        find = self.query_one("#find", Input)
        find.remove_class("open")
        self.query_one(ItemList).focus()

    def _found(self, hits: list[Any]) -> None:
        self.hits = hits
        self.refresh_bar()
        self.new_ages()
        self.query_one(ItemList).show(hits, self._draw_hit, empty=Text(f"no message holds '{inline(self.query_text)}'", end=""))
        self.query_one(ColumnHeads).refresh()
        self.note(f"{len(hits)} matching messages; Enter opens the transcript there, Esc the threads")

    def go_back(self) -> bool:
        """Esc: close the search line, or leave the hits for the listing."""
        if self.query_one("#find", Input).has_class("open"):
            self._close_find()
            return True
        if self.hits is not None and self.listing is not None:
            self._listed(self.listing)
            return True
        return False

    def action_filter(self) -> None:
        self.app.push_screen(FilterScreen(self.filters), self._filtered)

    def _filtered(self, filters: Filters | None) -> None:
        if filters is not None and filters != self.filters:
            self.filters = filters
            self.load()

    def action_sort(self) -> None:
        self.filters = self.filters.with_(sort=BROWSE_SORTS[(BROWSE_SORTS.index(self.filters.sort) + 1) % len(BROWSE_SORTS)])
        self.load()

    def _need_thread(self) -> str | None:
        key = self._current()
        if key is None:
            self.app.notify("no thread here", severity="warning", markup=False)
        return key

    def action_state(self) -> None:
        from symfonic_cli.browse.thread import StateScreen

        key = self._need_thread()
        if key is not None:
            self.app.push_screen(StateScreen(key))

    def action_history(self) -> None:
        from symfonic_cli.browse.thread import HistoryScreen

        key = self._need_thread()
        if key is not None:
            self.app.push_screen(HistoryScreen(key))

    def action_compat(self) -> None:
        self.browse.action_compat()

    def action_usage(self) -> None:
        self.browse.action_usage()


class FilterScreen(ModalScreen[Filters | None]):
    """``f``: the listing's filters, as ``threads list`` takes them. Enter applies, Esc cancels."""

    BINDINGS = [Binding("escape", "cancel", "cancel")]
    DEFAULT_CSS = """
    FilterScreen { align: center middle; }
    FilterScreen > Vertical { width: 64; height: auto; border: round $primary; background: $surface; padding: 0 1; }
    /* :focus too: Input's own focus style (a tall border) is more specific and would leave a
       one-row field only its borders, hiding what is typed. */
    FilterScreen Input, FilterScreen Input:focus { margin: 0 0 1 0; border: none; height: 1; padding: 0 1; }
    """
    FIELDS = (("tenant", "tenant"), ("sub_tenant", "sub-tenant (needs a tenant)"),
              ("status", f"status: {listed(STATUSES)} (a comma list)"),
              ("active_within", "active within (e.g. 7d)"), ("inactive_for", "inactive for (e.g. 90d)"))

    def __init__(self, filters: Filters) -> None:
        super().__init__()
        self.filters = filters

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("filter the threads (Enter applies, Esc cancels)", markup=False)
            for name, label in self.FIELDS:
                value = getattr(self.filters, name)
                text = ",".join(value) if isinstance(value, tuple) else (value or "")
                yield Input(value=text, placeholder=label, id=name)

    def on_input_submitted(self, _message: Input.Submitted) -> None:
        values = {name: self.query_one(f"#{name}", Input).value.strip() or None for name, _ in self.FIELDS}
        words = tuple(w.strip().lower() for w in (values.pop("status") or "").split(",") if w.strip())
        wrong = [w for w in words if w not in STATUSES]
        if wrong:
            self.app.notify(inline(f"unknown status '{wrong[0]}': use {listed(STATUSES)}"), severity="error", markup=False)
            return
        if values["sub_tenant"] and not values["tenant"]:
            self.app.notify("a sub-tenant needs a tenant", severity="error", markup=False)
            return
        self.dismiss(self.filters.with_(status=words, **values))

    def action_cancel(self) -> None:
        self.dismiss(None)
