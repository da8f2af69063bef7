"""What a person at a terminal waits for: ``--help``, a TAB, the quick listing.

Each contender is a whole process (``python -m symfonic_cli ...``), run --runs times, interleaved
with the others so they share the machine's load; the table shows medians, each against the
interpreter's own start (``python -c pass``), and the targets of issue #15:

- ``symfonic --help``, ``symfonic threads list --help``, ``symfonic transcript show --help``:
  under 0.15 s;
- one TAB: the completion answer for ``symfonic threads list --format <TAB>`` through the shipped
  bash protocol (``_SYMFONIC_COMPLETE=complete_bash``, ``COMP_WORDS``, ``COMP_CWORD``; the
  answer must hold ``json``): under 100 ms;
- the quick listing route ``symfonic threads list -s demo.db`` (a demo store made by
  ``symfonic demo``, under benchmarks/out/): as fast as before.

Both checkouts are byte-compiled first (as installed packages are). ``--before DIR`` also runs the quick listing and the inspecting commands from another checkout's
``symfonic_cli`` (e.g. ``--before ../symfonic-before``), in the same interleaved runs, with the ratios ours/before.

Run: ``python benchmarks/bench_terminal.py [--runs N] [--before DIR]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
OUT = ROOT / "out"
REPO = ROOT.parent
TARGETS = {"help": 0.15, "tab": 0.100, "inspect": 0.3}


def _demo_store() -> Path:
    OUT.mkdir(exist_ok=True)
    path = OUT / "terminal-demo.db"
    if not path.exists():
        subprocess.run([sys.executable, "-m", "symfonic_cli", "demo", str(path)], cwd=REPO, check=True,
                       stdout=subprocess.DEVNULL)
    return path


def _contenders(store: Path, before: Path | None, cache_home: str) -> dict[str, tuple[list[str], dict, str, str | None]]:
    """name -> (argv, extra env, cwd, what stdout must hold)."""
    py = sys.executable
    me = [py, "-m", "symfonic_cli"]
    tab_env = {
        "_SYMFONIC_COMPLETE": "complete_bash",
        "COMP_WORDS": "symfonic threads list --format ",
        "COMP_CWORD": "4",
        "XDG_CACHE_HOME": cache_home,
    }
    out = {
        "python -c pass": ([py, "-c", "pass"], {}, str(REPO), None),
        "symfonic --help": ([*me, "--help"], {}, str(REPO), "Commands:"),
        "symfonic threads list --help": ([*me, "threads", "list", "--help"], {}, str(REPO), "--status"),
        "symfonic transcript show --help": ([*me, "transcript", "show", "--help"], {}, str(REPO), "--speaker"),
        "TAB: threads list --format <TAB>": ([*me], tab_env, str(REPO), "json"),
        "symfonic threads list -s demo.db": ([*me, "threads", "list", "-s", str(store)], {}, str(REPO), "acme"),
        # Issue #37: every inspecting command on the demo store within 0.3 s of a process start.
        "thread show (interrupted)": ([*me, "thread", "show", "-s", str(store), "acme:eu:s-003"], {}, str(REPO), "interrupted"),
        "thread show (done)": ([*me, "thread", "show", "-s", str(store), "acme:_:s-001"], {}, str(REPO), "done"),
        "thread history": ([*me, "thread", "history", "-s", str(store), "acme:_:s-001"], {}, str(REPO), "loop"),
        "thread diff -2 -1": ([*me, "thread", "diff", "-s", str(store), "acme:_:s-001", "-2", "-1"], {}, str(REPO), "messages"),
        "transcript show": ([*me, "transcript", "show", "-s", str(store), "acme:_:s-001"], {}, str(REPO), "1042"),
    }
    if before is not None:  # the quick listing and every inspecting command, from the other checkout
        for name in [n for n in out if n.startswith(("symfonic threads list -s", "thread ", "transcript "))]:
            argv, env, _, expect = out[name]
            out[f"{name} (before)".replace("symfonic threads list -s demo.db", "threads list -s demo.db")] = (argv, env, str(before), expect)
    return out


def _once(argv: list[str], env: dict, cwd: str, expect: str | None) -> float:
    environ = {k: v for k, v in os.environ.items() if k not in ("SYMFONIC_STORE", "NO_COLOR", "_SYMFONIC_COMPLETE")}
    environ.update(env)
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=environ, capture_output=True, text=True)
    took = time.perf_counter() - start
    if proc.returncode != 0 or (expect is not None and expect not in proc.stdout):
        raise SystemExit(f"bench_terminal: {' '.join(argv[2:])} failed (exit {proc.returncode}): {proc.stderr[-300:]}")
    return took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--before", type=Path, help="another checkout whose quick listing and inspecting commands to time as well")
    a = ap.parse_args()
    store = _demo_store()
    before = a.before.resolve() if a.before is not None else None
    # Byte code for both checkouts, as an install has it (PYTHONDONTWRITEBYTECODE would otherwise
    # leave one of them compiling every module on every run).
    for checkout in (REPO, before):
        if checkout is not None:
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(checkout / "symfonic_cli")], check=True)
    with tempfile.TemporaryDirectory() as cache_home:
        contenders = _contenders(store, before, cache_home)
        for argv, env, cwd, expect in contenders.values():  # warm: byte code, the completion cache
            _once(argv, env, cwd, expect)
        times: dict[str, list[float]] = {name: [] for name in contenders}
        for _ in range(a.runs):
            for name, spec in contenders.items():
                times[name].append(_once(*spec))
    med = {name: statistics.median(xs) for name, xs in times.items()}
    base = med["python -c pass"]
    print(f"bench_terminal: medians of {a.runs} whole processes each, interleaved; python {sys.version.split()[0]}")
    print(f"{'command':<40} {'median s':>9} {'x start':>8} {'target':>8}  verdict")
    for name, m in med.items():
        target = (TARGETS["help"] if name.endswith("--help") else TARGETS["tab"] if name.startswith("TAB")
                  else TARGETS["inspect"] if name.startswith(("thread ", "transcript ")) else None)
        verdict = "" if target is None else ("ok" if m < target else "OVER")
        print(f"{name:<40} {m:>9.3f} {m / base:>7.2f}x {'' if target is None else f'< {target:.3f}':>8}  {verdict}")
    if before is not None:
        ours, old = med["symfonic threads list -s demo.db"], med["threads list -s demo.db (before)"]
        print(f"quick listing ours/before: {ours / old:.2f}x ({ours:.3f} s vs {old:.3f} s)")
        for name in [n for n in med if n.startswith(("thread ", "transcript ")) and not n.endswith("(before)")]:
            ours, old = med[name], med[f"{name} (before)"]
            print(f"{name + ' ours/before:':<40} {ours / old:.2f}x ({ours:.3f} s vs {old:.3f} s)")


if __name__ == "__main__":
    main()
