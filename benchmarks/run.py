"""Transcript, listing and start-up benchmarks: medians, ratios and peak memory, side by side.

    python -m benchmarks.run [--quick] [--no-postgres] [--sizes 250,500,1000,2000] [--reps N]
    python -m benchmarks.run --listings-only [--installed]

Every measurement is a whole process (start-up included), as a support engineer runs it; peak
memory is that process's max RSS. Quick commands and their raw counterparts run in turn, round
after round, at least 11 times each. Stores are generated once by real graphs (benchmarks/stores.py).
The reference algorithm runs only up to --reference-max turns (it is quadratic), once each.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks import stores

PY = sys.executable
TIME = "/usr/bin/time" if Path("/usr/bin/time").exists() else None
ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Measure:
    seconds: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)  # user + system: steadier on a busy machine
    rss_mb: float = 0.0
    out: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def cpu_median(self) -> float:
        return statistics.median(self.cpu)


def measure(cmd: list[str], reps: int) -> Measure:
    m = Measure()
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")
    if PY != sys.executable:  # the installed copy: its own symfonic_cli, the checkout's benchmarks
        env["PYTHONPATH"] = str(ROOT / "benchmarks" / "out" / "pythonpath")
    env.pop("SYMFONIC_STORE", None)
    for _ in range(reps):
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.NamedTemporaryFile() as rss:
            # A forked child starts with this process's RSS as its high-water mark; /usr/bin/time
            # is a small process, so its report is the command's own peak.
            timed = [TIME, "-f", "%M", "-o", rss.name, *cmd] if TIME else cmd
            start = time.perf_counter()
            proc = subprocess.Popen(timed, stdout=out, stderr=err, env=env, cwd=ROOT)
            _, status, usage = os.wait4(proc.pid, 0)
            m.seconds.append(time.perf_counter() - start)
            proc.returncode = os.waitstatus_to_exitcode(status)
            m.cpu.append(usage.ru_utime + usage.ru_stime)
            peak_kb = usage.ru_maxrss
            if TIME:
                try:
                    peak_kb = int(Path(rss.name).read_text().split()[-1])
                except (ValueError, IndexError):
                    pass
            m.rss_mb = max(m.rss_mb, peak_kb / 1024)
            if proc.returncode != 0:
                err.seek(0)
                raise SystemExit(f"benchmark command failed ({proc.returncode}): {' '.join(cmd)}\n{err.read().decode()[-2000:]}")
            out.seek(0)
            m.out = out.read().decode()
    return m


def use_installed_copy() -> None:
    """Measure a regular (non-editable) install, as users get it, in benchmarks/out/installed.

    An editable install loads a finder at every start that imports pathlib, re and urllib, in
    the raw scripts too; a regular install does not, so the quick commands' ratios are higher.
    """
    global PY
    venv = ROOT / "benchmarks" / "out" / "installed"
    py = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", f"{ROOT}[postgres]"], check=True, env=env)
    else:
        subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", str(ROOT)], check=True, env=env)
    PY = str(py)


def _link_benchmarks() -> None:
    # The raw scripts are modules of this checkout; expose only them, not symfonic_cli.
    folder = ROOT / "benchmarks" / "out" / "pythonpath"
    folder.mkdir(parents=True, exist_ok=True)
    link = folder / "benchmarks"
    if not link.exists():
        link.symlink_to(ROOT / "benchmarks")


def side_by_side(cmds: list[list[str]], reps: int) -> list[Measure]:
    """Each command once per round, in turn, so a noisy spell of the machine hits them alike."""
    results = [Measure() for _ in cmds]
    for _ in range(reps):
        for m, cmd in zip(results, cmds):
            one = measure(cmd, 1)
            m.seconds += one.seconds
            m.cpu += one.cpu
            m.rss_mb = max(m.rss_mb, one.rss_mb)
            m.out = one.out
    return results


# Quick commands are cheap to repeat, and their medians need more runs to be steady.
QUICK_REPS = 11


def symfonic(*args: str) -> list[str]:
    exe = Path(PY).with_name("symfonic")
    return ([str(exe)] if exe.exists() else [PY, "-m", "symfonic_cli"]) + list(args)


class Report:
    def __init__(self) -> None:
        self.lines: list[tuple[str, ...]] = []
        self.targets: list[tuple[str, bool, str]] = []

    def row(self, kind: str, store: str, what: str, m: Measure | None, ratio: str = "", note: str = "") -> None:
        med = f"{m.median:.3f}" if m else "-"
        cpu = f"{m.cpu_median:.3f}" if m else "-"
        rss = f"{m.rss_mb:.0f}" if m else "-"
        self.lines.append((kind, store, what, med, cpu, ratio, rss, note))
        print(f"  {kind:<8} {store:<10} {what:<44} {med:>9} {cpu:>8} {ratio:>18} {rss:>8}  {note}", flush=True)

    def target(self, name: str, ok: bool, detail: str) -> None:
        self.targets.append((name, ok, detail))

    def header(self) -> None:
        print(f"  {'kind':<8} {'store':<10} {'measure':<44} {'median s':>9} {'cpu s':>8} {'ratio (wall)':>18} {'RSS MB':>8}")

    def finish(self) -> int:
        print("\nTargets (issues #2, #3, #8):")
        for name, ok, detail in self.targets:
            print(f"  [{'PASS' if ok else 'FAIL'}] {name}: {detail}")
        return 0 if all(ok for _, ok, _ in self.targets) else 1


def transcripts(kind: str, url_of, sizes: list[int], reps: int, ref_max: int, rep: Report) -> None:
    ours_by_size: dict[int, float] = {}
    for n in sizes:
        url, key, name = url_of(f"long-{n}"), stores.long_key(n), f"long-{n}"
        ours = measure(symfonic("transcript", "show", "--store", url, "--thread", key, "--format", "json"), reps)
        ours_by_size[n] = ours.median
        rows = json.loads(ours.out)
        rep.row(kind, name, f"transcript show --format json ({len(rows)} rows)", ours, "1.00")
        latest = measure([PY, "-m", "tests.support.reference", url, key, "--latest-only"], reps)
        rep.row(kind, name, "bound: decode the latest checkpoint only", latest, f"ours/bound {ours.median / latest.median:.2f}")
        raw = measure([PY, "-m", "benchmarks.raw_queries", "bytes", url, key], reps)
        rep.row(kind, name, "bound: read every stored byte, no decoding", raw, f"ours/bound {ours.median / raw.median:.2f}")
        first = measure(symfonic("transcript", "show", "--store", url, "--thread", key, "--index", "0", "--speaker", "user", "--format", "json"), reps)
        rep.row(kind, name, "  --index 0 --speaker user", first, f"vs latest {first.median / latest.median:.2f}")
        if n == 2000:
            rep.target(f"{kind} --index 0 on 2,000 turns within 2x of decoding the latest", first.median <= 2 * latest.median, f"{first.median / latest.median:.2f}x")
            rep.target(f"{kind} transcript show on 2,000 turns under 300 MB", ours.rss_mb < 300, f"{ours.rss_mb:.0f} MB")
        if n == 1000:
            rep.target(f"{kind} 1,000 turns within 1.5x of decoding the latest", ours.median <= 1.5 * latest.median, f"{ours.median / latest.median:.2f}x")
        if n <= ref_max:
            ref = measure([PY, "-m", "tests.support.reference", url, key], 1)
            same = json.loads(ref.out) == rows
            rep.row(kind, name, "reference algorithm (walk all, decode all)", ref, f"{ref.median / ours.median:.0f}x slower", "rows identical" if same else "ROWS DIFFER")
            rep.target(f"{kind} {name}: rows identical to the reference", same, "checked")
            if n == 1000:
                rep.target(f"{kind} 1,000 turns at least 100x faster than the reference", ref.median >= 100 * ours.median, f"{ref.median / ours.median:.0f}x")
    done = sorted(ours_by_size)
    for a, b in zip(done, done[1:]):
        if b == 2 * a:
            ratio = ours_by_size[b] / ours_by_size[a]
            rep.target(f"{kind} doubling {a} -> {b} turns at most 2.5x", ratio <= 2.5, f"{ratio:.2f}x")


def listings(kind: str, url: str, reps: int, rep: Report) -> None:
    name = "many"
    quick = max(reps, QUICK_REPS)
    threads, raw = side_by_side(
        [symfonic("threads", "list", "--store", url, "--format", "json"), [PY, "-m", "benchmarks.raw_queries", "threads", url]], quick
    )
    rep.row(kind, name, "threads list --format json", threads, f"vs raw {threads.median / raw.median:.2f}")
    rep.row(kind, name, "raw GROUP BY thread_id (Python driver)", raw, "1.00")
    rep.target(f"{kind} threads list within 2x of the raw aggregate", threads.median <= 2 * raw.median, f"{threads.median / raw.median:.2f}x")
    if kind == "postgres" and shutil.which("psql"):
        psql = measure(["psql", "-X", "-q", "-A", "-t", "-o", "/dev/null", "-d", url, "-c", "SELECT thread_id, count(*), max(checkpoint_id) FROM checkpoints GROUP BY thread_id"], reps)
        rep.row(kind, name, "raw GROUP BY thread_id (psql)", psql, f"threads/psql {threads.median / psql.median:.2f}")
        rep.target(f"{kind} threads list under 200 MB", threads.rss_mb < 200, f"{threads.rss_mb:.0f} MB")
    info, raw_info = side_by_side(
        [symfonic("store", "info", "--store", url, "--format", "json"), [PY, "-m", "benchmarks.raw_queries", "info", url]], quick
    )
    rep.row(kind, name, "store info --format json", info, f"vs raw {info.median / raw_info.median:.2f}")
    rep.row(kind, name, "raw counts (Python driver)", raw_info, "1.00")
    key = stores.many_key(7)
    one = measure(symfonic("transcript", "show", "--store", url, "--thread", key, "--format", "json"), reps)
    rep.row(kind, name, "transcript show, one 10-turn thread", one)
    if kind == "postgres":
        rep.target(f"{kind} transcript show on the many-threads store under 200 MB", one.rss_mb < 200, f"{one.rss_mb:.0f} MB")


def startup(reps: int, rep: Report) -> None:
    bare, helped = side_by_side([[PY, "-c", "pass"], symfonic("--help")], max(reps, QUICK_REPS))
    rep.row("-", "-", "python -c pass", bare, "1.00")
    rep.row("-", "-", "symfonic --help", helped, f"{helped.median / bare.median:.1f}x python")
    rep.target("symfonic --help under 0.3 s", helped.median < 0.3, f"{helped.median:.3f} s")


def main(argv: list[str] | None = None) -> int:
    from benchmarks import byte_compile

    byte_compile()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="250 and 500 turns, one repetition, reference at 250 only")
    ap.add_argument("--no-postgres", action="store_true")
    ap.add_argument("--sizes", help="comma-separated turn counts (default 250,500,1000,2000)")
    ap.add_argument("--postgres-sizes", help="turn counts on PostgreSQL (default: --sizes)")
    ap.add_argument("--reps", type=int, help="repetitions per measurement (default 3, quick 1)")
    ap.add_argument("--reference-max", type=int, help="largest thread the reference runs on (default 1000, quick 250)")
    ap.add_argument("--listings-only", action="store_true", help="start-up, threads list and store info only")
    ap.add_argument("--installed", action="store_true", help="measure a regular install (benchmarks/out/installed)")
    args = ap.parse_args(argv)
    if args.installed:
        use_installed_copy()
        _link_benchmarks()
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else ([250, 500] if args.quick else list(stores.LONG_TURNS))
    if args.listings_only:
        sizes = []
    pg_sizes = [int(s) for s in args.postgres_sizes.split(",")] if args.postgres_sizes else sizes
    reps = args.reps or (1 if args.quick else 3)
    ref_max = args.reference_max or (250 if args.quick else 1000)

    rep = Report()
    for spec in [f"long-{n}" for n in sizes] + ["many"]:
        stores.sqlite_store(spec)
    server = None
    if not args.no_postgres:
        from benchmarks import pg

        server, why = pg.available(stores.OUT / "pg")
        if server is None:
            print(f"note: {why}")
    try:
        pg_urls = {}
        if server is not None:
            for spec in ([] if args.listings_only else [f"long-{n}" for n in pg_sizes]) + ["many"]:
                pg_urls[spec] = stores.postgres_store(spec, server)
        print(f"\nsymfonic benchmarks ({reps} repetition(s), medians of whole processes)\n")
        rep.header()
        startup(reps, rep)
        if sizes:
            transcripts("sqlite", lambda spec: str(stores.sqlite_store(spec)), sizes, reps, ref_max, rep)
        listings("sqlite", str(stores.sqlite_store("many")), reps, rep)
        if server is not None:
            if not args.listings_only:
                transcripts("postgres", pg_urls.__getitem__, pg_sizes, reps, ref_max, rep)
            listings("postgres", pg_urls["many"], reps, rep)
    finally:
        if server is not None:
            server.stop()
    return rep.finish()


if __name__ == "__main__":
    sys.exit(main())
