"""``symfonic browse`` driven headless (Textual's Pilot) on a large store (issue #39 "Fast on a large store").

Stores: benchmarks/stores.py's "many" (2,000 threads x 10 agent turns with tool calls, real graphs)
or, with ``--threads 20000``, the same grown ten-fold with SQL (bench_complete.py's many-x10.db,
~680,000 checkpoints); "long-500" (one 500-turn thread) for the transcript. Each run is a fresh
process (``--child``) that reports:

- first screen: from the process's start (interpreter and imports included) to the first frame
  drawn with the listing's rows in it (target 1 s), and the part after the store is opened; the
  whole listing's arrival is reported apart (the first screen does not wait for it);
- keypress: each of 200 down, 40 page-down and 40 end/home presses handled and drawn (p50, p95;
  target 100 ms p95); a sort and a status filter: the key handled, and the re-read listing drawn;
- transcript: Enter on the 500-turn thread until its rows are drawn (target 0.5 s);
- search: ``/`` a needle until the hits are drawn, next to ``Store.search`` alone in the same process;
- memory: the child's peak RSS (target 200 MB).
Medians over --runs processes.

Run: ``python benchmarks/bench_browse.py [--threads 2000|20000] [--runs 3]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
if str(ROOT.parent) not in sys.path:
    sys.path.insert(0, str(ROOT.parent))

NEEDLE = "question 6 of thread 1999"


async def _settled(app: Any, pilot: Any) -> None:
    """Until the listing is whole with the run states of the rows on the screen and no read is
    left (a read's result may start the next one after a refresh: the rest of the listing, the statuses)."""
    from symfonic_cli.browse.itemlist import ItemList

    while True:
        await app.workers.wait_for_complete()
        await pilot.pause()
        listing = app.screen.listing
        shown = app.screen.query_one(ItemList).on_screen() if listing is not None else range(0)
        if listing is not None and listing.complete and (listing.statuses_known or all(listing.rows[i].status for i in shown)) \
                and not any(w.is_running for w in app.workers):
            return
        await asyncio.sleep(0.01)


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _drive(many: str, long: str, started: float) -> dict[str, Any]:
    from datetime import datetime, timezone

    import symfonic_cli
    from symfonic_cli.browse.source import FIRST_PAGE, Filters, Source

    # As cli/browse.py starts it: the store opened and the first screen's read started, then Textual.
    t0 = time.perf_counter()
    store = symfonic_cli.open_store(many)
    source = Source(store, now=lambda: datetime.now(timezone.utc))
    source.read_early(Filters(), FIRST_PAGE)
    from symfonic_cli.browse.app import BrowseApp
    from symfonic_cli.browse.itemlist import ItemList

    out: dict[str, Any] = {"imports_s": time.perf_counter() - started}
    drawn: list[float] = []
    render_line = ItemList.render_line

    def first_drawn(self: ItemList, y: int) -> Any:  # the first frame holding rows: the first screen
        if self.items and not drawn:
            drawn.append(time.perf_counter())
        return render_line(self, y)

    ItemList.render_line = first_drawn  # type: ignore[method-assign]
    app = BrowseApp(source)
    async with app.run_test(size=(120, 40)) as pilot:
        while not drawn:
            await asyncio.sleep(0.005)
        out["first_screen_s"] = drawn[0] - started
        out["first_screen_after_open_s"] = drawn[0] - t0
        while not app.screen.query_one("#rows").items or not app.screen.listing.complete:  # type: ignore[attr-defined]
            await asyncio.sleep(0.005)
        out["whole_listing_s"] = time.perf_counter() - started
        out["threads"] = len(app.screen.query_one("#rows").items)
        out["first_screen_rows"] = min(FIRST_PAGE, out["threads"])
        await _settled(app, pilot)
        out["statuses_s"] = time.perf_counter() - t0
        presses: list[float] = []
        for key in ["down"] * 200 + ["pagedown"] * 40 + ["end", "home"] * 20:
            # The key through the app's bindings, then the whole screen drawn (Pilot's press waits
            # for the process to go idle, first-message reads included: not a latency).
            t = time.perf_counter()
            await app._check_bindings(key)
            app.screen._compositor.render_full_update()
            presses.append(time.perf_counter() - t)
            await asyncio.sleep(0)
        out["key_p50_ms"], out["key_p95_ms"] = 1000 * _p(presses, 0.5), 1000 * _p(presses, 0.95)
        for name, keys in (("sort", ["o"]), ("filter", None)):
            before = app.screen.listing  # type: ignore[attr-defined]
            t = time.perf_counter()
            if keys is None:
                app.filter_status(("done",))
            else:
                await app._check_bindings(keys[0])
            out[f"{name}_key_ms"] = 1000 * (time.perf_counter() - t)
            while app.screen.listing is before:  # type: ignore[attr-defined]
                await asyncio.sleep(0.005)
            await pilot.pause()
            out[f"{name}_first_s"] = time.perf_counter() - t
            await _settled(app, pilot)
            out[f"{name}_drawn_s"] = time.perf_counter() - t
        app.screen.query_one("#rows").focus()
        await pilot.press("slash")
        app.screen.query_one("#find").value = NEEDLE
        t = time.perf_counter()
        await app.screen.query_one("#find").action_submit()
        while app.screen.hits is None:  # type: ignore[attr-defined]
            await asyncio.sleep(0.005)
        await pilot.pause()
        out["search_s"] = time.perf_counter() - t
        out["search_hits"] = len(app.screen.hits)  # type: ignore[attr-defined]
        await app.workers.wait_for_complete()
        t = time.perf_counter()
        store.search(NEEDLE)
        out["store_search_s"] = time.perf_counter() - t
    source.close()  # as cli/browse.py: under the read lock (a read still running must not meet a closed connection)
    store = symfonic_cli.open_store(long)
    source = Source(store)
    app = BrowseApp(source)
    async with app.run_test(size=(120, 40)) as pilot:
        while not (app.screen.query("#rows") and app.screen.query_one("#rows").items):
            await asyncio.sleep(0.005)
        await pilot.pause()
        await app.workers.wait_for_complete()  # the listing's own reads (statuses, first messages) done
        t = time.perf_counter()
        await app._check_bindings("enter")
        while type(app.screen).__name__ != "TranscriptScreen" or not app.screen.query_one("#rows").items:
            await asyncio.sleep(0.002)
        await pilot.pause()
        out["transcript_500_s"] = time.perf_counter() - t
        out["transcript_rows"] = len(app.screen.query_one("#rows").items)
        t = time.perf_counter()
        store.transcript(store.threads()[0].key)
        out["store_transcript_s"] = time.perf_counter() - t
    source.close()
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def child(many: str, long: str, started: float) -> None:
    print(json.dumps(asyncio.run(_drive(many, long, started))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2000, choices=(2000, 20000))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--child", nargs=2, metavar=("MANY", "LONG"))
    parser.add_argument("--started", type=float)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1], args.started)
        return
    from benchmarks.stores import sqlite_store

    # As an installed tool runs: byte-compiled (an editable install with --no-compile is not).
    import textual

    for package in (Path(textual.__file__).parent, ROOT.parent / "symfonic_cli"):
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)], check=True, capture_output=True)
    long = str(sqlite_store("long-500"))
    if args.threads == 20000:
        from benchmarks.bench_complete import grown_sqlite

        many = str(grown_sqlite())
    else:
        many = str(sqlite_store("many"))
    import symfonic_cli

    with symfonic_cli.open_store(long) as st:
        long_key = st.threads()[0].key
    # Side by side: the CLI commands answering the same questions, each a whole process.
    commands = {
        "cli_threads_list_s": ["threads", "list", "-s", many, "-f", "json"],
        "cli_threads_search_s": ["threads", "search", "-s", many, NEEDLE, "-f", "json"],
        "cli_transcript_500_s": ["transcript", "show", "-s", long, "-t", long_key, "-f", "json"],
    }
    results = []
    for _ in range(args.runs):
        # The child measures from this instant: the interpreter's start and the imports count.
        code = "import sys, time; s = time.perf_counter(); f = sys.argv[1]; sys.argv = sys.argv[1:] + ['--started', str(s)]; " \
               "import runpy; runpy.run_path(f, run_name='__main__')"
        done = subprocess.run([sys.executable, "-c", code, __file__, "--child", many, long], capture_output=True, text=True,
                              env=dict(os.environ), check=True)
        result = json.loads(done.stdout.strip().splitlines()[-1])
        for name, words in commands.items():
            t = time.perf_counter()
            subprocess.run([sys.executable, "-m", "symfonic_cli", *words], capture_output=True, check=True)
            result[name] = time.perf_counter() - t
        results.append(result)
    print(f"store: {many} ({results[0]['threads']} threads), transcript: {long}; medians of {args.runs} runs")
    for name in results[0]:
        values = [r[name] for r in results]
        print(f"  {name:<30} {statistics.median(values):10.3f}   ({', '.join(f'{v:.3f}' for v in values)})")


if __name__ == "__main__":
    main()
