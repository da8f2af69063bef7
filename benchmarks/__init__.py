"""Benchmark scripts: ``python -m benchmarks.run`` and the ``bench_*.py`` files."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def byte_compile() -> None:
    """Compile symfonic_cli and the benchmark scripts to bytecode before anything is timed.

    ``pip install`` does this for an installed tool; an editable checkout run with
    PYTHONDONTWRITEBYTECODE set (as on these machines) would otherwise recompile every module
    in every measured process, about 25 ms that no user pays.
    """
    import compileall
    import re

    for folder in ("symfonic_cli", "benchmarks"):
        compileall.compile_dir(ROOT / folder, quiet=1, rx=re.compile(r"/out/"))
