"""What a person reads in ``symfonic browse`` on the demo store, at 80x24 and 120x40, in colour and
under NO_COLOR: the filter form shows what is typed into its focused field, and the ``error``
status and the "error in" heading stand out at 4.5:1 or more against what is under them."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest

import symfonic_cli
from tests.support.browser import browser, newest_plus, screen_text, settle

SIZES = {"80x24": (80, 24), "120x40": (120, 40)}
MODES = ("colour", "NO_COLOR")
TYPED = "interrupted,error"
# f, Tab twice (tenant, sub-tenant) to the status field, the CLI's comma form typed into it.
TO_STATUS = ("f", "tab", "tab", *TYPED)


@pytest.fixture(scope="module")
def demo_master(fixed_demo_master) -> Path:  # each test copies it
    return fixed_demo_master


def _app(master: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str) -> tuple[Any, Any]:
    # Textual reads NO_COLOR when the app is made (``symfonic browse --color never`` sets it).
    if mode == "NO_COLOR":
        monkeypatch.setenv("NO_COLOR", "1")
    else:
        monkeypatch.delenv("NO_COLOR", raising=False)
    shutil.copyfile(master, tmp_path / "demo.db")
    monkeypatch.chdir(tmp_path)
    store = symfonic_cli.open_store("demo.db")
    return store, browser(store, now=newest_plus(store), store_arg="demo.db")


async def _press(pilot: Any, keys: tuple[str, ...]) -> None:
    await settle(pilot)
    for key in keys:
        await pilot.press(key)
    await settle(pilot)


@pytest.mark.parametrize("size", SIZES, ids=list(SIZES))
@pytest.mark.parametrize("mode", MODES)
def test_the_focused_filter_field_shows_what_is_typed(demo_master, size, mode, tmp_path, monkeypatch):
    store, app = _app(demo_master, tmp_path, monkeypatch, mode)

    async def drive() -> None:
        async with app.run_test(size=SIZES[size]) as pilot:
            await _press(pilot, TO_STATUS)
            field = app.screen.query_one("#status")
            assert field.has_focus and field.value == TYPED
            # Every field one row high, the focused one too: the form keeps its height.
            assert [f.region.height for f in app.screen.query("Input")] == [1] * 5
            screen = screen_text(app)
            assert TYPED in screen, screen
            await pilot.press("tab")  # focus moves on: the typed text stays, the next field's label shows
            await settle(pilot)
            screen = screen_text(app)
            assert TYPED in screen and "active within (e.g. 7d)" in screen, screen

    try:
        asyncio.run(drive())
    finally:
        store.close()


# The screens these tests read, as snapshots: what is typed in the filter form, and the failed
# thread (the listing's first row) in the listing and in its run state.
SCREENS = {"filter-typed": TO_STATUS, "threads": (), "state-error": ("s",)}


@pytest.mark.parametrize("size", SIZES, ids=list(SIZES))
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("screen", SCREENS)
def test_snapshots(snap_compare, demo_master, screen, size, mode, tmp_path, monkeypatch):
    store, app = _app(demo_master, tmp_path, monkeypatch, mode)
    try:
        assert snap_compare(app, terminal_size=SIZES[size], run_before=lambda pilot: _press(pilot, SCREENS[screen]))
    finally:
        store.close()


def _luminance(rgb: tuple[int, int, int]) -> float:
    """WCAG 2's relative luminance of an sRGB colour."""
    def linear(c: int) -> float:
        s = c / 255
        return s / 12.92 if s <= 0.04045 else ((s + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    """WCAG 2's contrast ratio of two colours (1 to 21)."""
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def _drawn_colours(app: Any, word: str, after: str = "") -> list[tuple[tuple[int, int, int], tuple[int, int, int]]]:
    """(text colour, background) of the first cell of ``word`` on every line where it follows
    ``after``, as drawn after Textual's filters (NO_COLOR's monochrome among them), reverse applied."""
    out = []
    for line in app.screen._compositor.render_full_update().strips:
        segments = [segment for strip in line for segment in strip]
        text = "".join(s.text for s in segments)
        if after not in text or word not in text[text.find(after) + len(after):]:
            continue
        cell, at = text.find(word, text.find(after) + len(after)), 0
        for segment in segments:
            if at <= cell < at + len(segment.text):
                style = segment.style
                assert style is not None and style.color is not None and style.bgcolor is not None, segment
                fg, bg = tuple(style.color.get_truecolor()), tuple(style.bgcolor.get_truecolor())
                out.append((bg, fg) if style.reverse else (fg, bg))
                break
            at += len(segment.text)
    return out  # type: ignore[return-value]


@pytest.mark.parametrize("size", SIZES, ids=list(SIZES))
@pytest.mark.parametrize("mode", MODES)
def test_error_reads_at_4_5_to_1(demo_master, size, mode, tmp_path, monkeypatch):
    store, app = _app(demo_master, tmp_path, monkeypatch, mode)
    ratios: dict[str, list[float]] = {}

    async def drive() -> None:
        async with app.run_test(size=SIZES[size]) as pilot:
            await _press(pilot, ())
            # The demo's listing starts with the failed thread: its status cell off the cursor's row,
            # then its run state (s): the status line and the "error in <node>" heading.
            await pilot.press("down")
            await settle(pilot)
            ratios["listing"] = [contrast(*c) for c in _drawn_colours(app, "error ", after="globex:apac:s-102")]
            await pilot.press("up", "s")
            await settle(pilot)
            ratios["heading"] = [contrast(*c) for c in _drawn_colours(app, "error in ")]
            ratios["status"] = [contrast(*c) for c in _drawn_colours(app, "error", after="status ")]

    try:
        asyncio.run(drive())
    finally:
        store.close()
    assert all(ratios.values()), ratios  # each place was found on the screen
    assert all(r >= 4.5 for found in ratios.values() for r in found), ratios


def test_ages_on_the_listing_move_on_together(demo_master, tmp_path, monkeypatch):
    """The listing by activity, seconds after its newest thread: the ages down the screen never get
    younger, when the cursor moves after the clock did (it redrew only the rows it left and
    entered) and after the ages are refreshed (all of them at once)."""
    import re
    from datetime import timedelta

    from symfonic_cli.browse import base
    from symfonic_cli.browse.app import BrowseApp
    from symfonic_cli.browse.source import Source

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setattr(base, "AGE_TICK", 0.5)  # the tick's length is not what is tested: no 10 s wait
    shutil.copyfile(demo_master, tmp_path / "demo.db")
    store = symfonic_cli.open_store(str(tmp_path / "demo.db"))
    clock = {"now": newest_plus(store, hours=0) + timedelta(seconds=10)}
    app = BrowseApp(Source(store, store_arg="demo.db", now=lambda: clock["now"]))

    def ages() -> list[int]:
        rows = [line for line in screen_text(app).splitlines() if re.match(r"(acme|globex):", line)]
        seconds = [re.search(r"\s(\d+)s\s", row) for row in rows]
        return [int(m.group(1)) for m in seconds if m]

    async def drive() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            first = ages()
            assert len(first) >= 4 and first == sorted(first), first
            clock["now"] += timedelta(seconds=3)
            await pilot.press("down")
            await settle(pilot)
            moved = ages()
            assert moved == sorted(moved), moved  # one instant for every row: none younger than the row above
            await pilot.pause(base.AGE_TICK + 0.5)
            await settle(pilot)
            later = ages()
            assert later == sorted(later) and later[0] == first[0] + 3, (first, later)

    try:
        asyncio.run(drive())
    finally:
        store.close()


@pytest.mark.parametrize("size", SIZES, ids=list(SIZES))
@pytest.mark.parametrize("mode", MODES)
def test_the_thread_list_names_its_columns(demo_master, size, mode, tmp_path, monkeypatch):
    """A line above the rows names each column where the rows have it (and the hits' parts)."""
    store, app = _app(demo_master, tmp_path, monkeypatch, mode)
    found: dict[str, list[str]] = {}

    async def drive() -> None:
        async with app.run_test(size=SIZES[size]) as pilot:
            await _press(pilot, ())
            found["threads"] = screen_text(app).splitlines()
            await _press(pilot, ("slash", *"refund", "enter"))
            found["hits"] = screen_text(app).splitlines()

    try:
        asyncio.run(drive())
    finally:
        store.close()
    heads, first = found["threads"][1], found["threads"][2]
    assert heads.split() == ["key", "status", "age", "ckpts", "first", "message"], heads
    assert first.startswith("globex:apac:s-102") and first[heads.index("status"):].startswith("error")
    assert first[: heads.index("age") + 3].endswith("2h")  # ages right-aligned under their heading
    assert first[: heads.index("ckpts") + 5].rstrip().endswith(" 4")
    assert found["hits"][1].startswith("key  [index] role  age"), found["hits"][1]
