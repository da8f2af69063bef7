"""A virtual list: only the lines on the screen are drawn (Textual's line API), whatever the length.

Each item is drawn by the screen's ``draw(item, width)`` into one ``Text`` line, or, for a wrapped
list (the transcript), into as many lines as it needs at the width (measured when the list or the
width changes; long messages wrap, never cut). The cursor is an item; Enter posts ``Chosen``.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from time import monotonic
from typing import Any

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

Draw = Callable[[Any, int], Text]
DrawMany = Callable[[Any, int], list[Text]]
CURSOR = Style(reverse=True)


@dataclass
class Wrapped:
    """A wrapped list's lines at one width: every line, the item of each line, each item's first line.
    Made by ``wrap`` on the interface's thread or, for a long transcript, in the worker that read it."""

    width: int
    lines: list[Text]
    owner: list[int]
    starts: list[int]


def wrap(items: Sequence[Any], draw: DrawMany, width: int) -> Wrapped:
    out = Wrapped(width, [], [], [])
    for i, item in enumerate(items):
        out.starts.append(len(out.lines))
        drawn = draw(item, width) or [Text("")]
        out.lines.extend(drawn)
        out.owner.extend([i] * len(drawn))
    return out


class ItemList(ScrollView, can_focus=True):
    BINDINGS = [
        Binding("up,k", "move(-1)", "up", show=False),
        Binding("down,j", "move(1)", "down", show=False),
        Binding("pageup", "page(-1)", "page up", show=False),
        Binding("pagedown", "page(1)", "page down", show=False),
        Binding("home,g", "edge(0)", "start", id="top", show=False),
        Binding("end,G", "edge(1)", "end", id="bottom", show=False),
        Binding("enter", "choose", "open", show=False),
    ]
    DEFAULT_CSS = "ItemList { height: 1fr; overflow-x: hidden; }"
    cursor: reactive[int] = reactive(0, repaint=False)

    class Chosen(Message):
        def __init__(self, item_list: ItemList, index: int) -> None:
            super().__init__()
            self.item_list = item_list
            self.index = index

    class Moved(Message):
        """The cursor or the visible part changed (a screen loads what the new rows need)."""

        def __init__(self, item_list: ItemList) -> None:
            super().__init__()
            self.item_list = item_list

    def __init__(self, *, wrapped: bool = False, id: str | None = None) -> None:
        super().__init__(id=id)
        self.items: Sequence[Any] = ()
        self._draw: Draw | None = None
        self._draw_many: DrawMany | None = None
        self.wrapped = wrapped
        self.empty = Text("")
        self._wrapped = Wrapped(0, [], [], [])  # wrapped: the lines at the width drawn
        # Drawn lines by (line, width, cursor state): a key redraws the whole list, and most lines
        # are as they were (a line costs about a millisecond to draw from its item).
        self._strips: dict[tuple[int, int, int, int], Strip] = {}

    # -- content

    def show(self, items: Sequence[Any], draw: Draw | DrawMany, *, cursor: int = 0, empty: Text | None = None,
             wrapped: Wrapped | None = None) -> None:
        """Show ``items``; ``wrapped``: their lines already made (at ``width()``, else made again here)."""
        self.items = items
        if self.wrapped:
            self._draw_many = draw  # type: ignore[assignment]
        else:
            self._draw = draw  # type: ignore[assignment]
        self.empty = empty if empty is not None else Text("")
        self._wrapped = wrapped if wrapped is not None else Wrapped(0, [], [], [])
        self._strips.clear()
        self._measure()
        self.set_cursor(cursor)
        self.refresh()

    def redraw(self) -> None:
        """The items changed in place (a status or first message arrived): draw again."""
        self._strips.clear()
        if self.wrapped:
            self._wrapped = Wrapped(0, [], [], [])
            self._measure()
        self.refresh()

    def notify_style_update(self) -> None:
        self._strips.clear()  # the theme, the colours or the focus changed: every line looks different
        super().notify_style_update()

    def width(self) -> int:
        """The width the items are drawn at now."""
        return max(1, self.scrollable_content_region.width or self.size.width or 80)

    def _measure(self) -> None:
        width = self.width()
        if self.wrapped and self._draw_many is not None and (width != self._wrapped.width or len(self._wrapped.starts) != len(self.items)):
            self._wrapped = wrap(self.items, self._draw_many, width)
        height = len(self._wrapped.lines) if self.wrapped else len(self.items)
        self.virtual_size = Size(width, max(height, 1))

    def on_resize(self) -> None:
        self._strips.clear()
        self._measure()
        self.refresh()

    # -- drawing

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        line = round(self.scroll_offset.y) + y
        if not self.items:
            return self._draw_line(y, line, width)
        if self.wrapped:
            selected = line < len(self._wrapped.owner) and self._wrapped.owner[line] == self.cursor
        else:
            selected = line == self.cursor
        # The minute in the key: a line showing an age is drawn again when the age may have changed.
        key = (line, width, (2 if self.has_focus else 1) if selected else 0, int(monotonic() // 60))
        strip = self._strips.get(key)
        if strip is None:
            if len(self._strips) > 4096:
                self._strips.clear()
            strip = self._strips[key] = self._draw_line(y, line, width)
        return strip

    def _draw_line(self, y: int, line: int, width: int) -> Strip:
        if not self.items:
            text = self.empty if y == 0 else Text("")
            selected = False
        elif self.wrapped:
            if line >= len(self._wrapped.lines):
                return Strip.blank(width, self.rich_style)
            text, selected = self._wrapped.lines[line], self._wrapped.owner[line] == self.cursor
        else:
            if line >= len(self.items) or self._draw is None:
                return Strip.blank(width, self.rich_style)
            text, selected = self._draw(self.items[line], width), line == self.cursor
        segments = list(text.render(self.app.console, end=""))
        if selected and self.has_focus:
            segments = list(Segment.apply_style(segments, post_style=CURSOR))
        elif selected:
            segments = list(Segment.apply_style(segments, post_style=Style(underline=True)))
        # Every segment styled: Textual's NO_COLOR filter reads each segment's style (None breaks it).
        base = self.rich_style
        styled = [Segment(t, base + s if s is not None else base, c) for t, s, c in segments]
        return Strip(styled).crop_extend(0, width, base).simplify()

    # -- the cursor

    def set_cursor(self, index: int) -> None:
        self.cursor = max(0, min(index, len(self.items) - 1)) if self.items else 0
        self._keep_visible()
        self.refresh()
        self.post_message(self.Moved(self))

    def _keep_visible(self) -> None:
        if not self.items:
            return
        if self.wrapped:
            top = self._wrapped.starts[self.cursor]
            end = self._wrapped.starts[self.cursor + 1] if self.cursor + 1 < len(self._wrapped.starts) else len(self._wrapped.lines)
        else:
            top, end = self.cursor, self.cursor + 1
        height = self.scrollable_content_region.height or 1
        self.scroll_to_region(Region(0, top, 1, min(end - top, height)), animate=False, immediate=True)

    def on_screen(self) -> range:
        """The items on the screen now."""
        height = self.scrollable_content_region.height or 24
        top = round(self.scroll_offset.y)
        if self.wrapped:
            if not self._wrapped.owner:
                return range(0)
            first = self._wrapped.owner[min(top, len(self._wrapped.owner) - 1)]
            last = self._wrapped.owner[min(top + height, len(self._wrapped.owner)) - 1]
            return range(first, last + 1)
        return range(top, min(top + height, len(self.items)))

    def item_at_line(self, line: int) -> int:
        return bisect_right(self._wrapped.starts, line) - 1 if self.wrapped else line

    def action_move(self, delta: int) -> None:
        self.set_cursor(self.cursor + delta)

    def action_page(self, direction: int) -> None:
        height = self.scrollable_content_region.height or 1
        if self.wrapped:
            target = self.item_at_line(max(0, round(self.scroll_offset.y) + direction * height))
            if target == self.cursor:
                target += direction
            self.set_cursor(target)
        else:
            self.set_cursor(self.cursor + direction * height)

    def action_edge(self, end: int) -> None:
        self.set_cursor(len(self.items) - 1 if end else 0)

    def action_choose(self) -> None:
        if self.items:
            self.post_message(self.Chosen(self, self.cursor))

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if round(old_value) != round(new_value):
            self.post_message(self.Moved(self))

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()
