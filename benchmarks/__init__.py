"""Benchmark scripts: ``python -m benchmarks.run`` and the ``bench_*.py`` files.

Nothing is imported here at module level: ``benchmarks.raw_queries``, the raw side of the
listing ratios, must start as lean as a hand-written script.
"""


def byte_compile() -> None:
    """Compile symfonic_cli and the benchmark scripts to bytecode before anything is timed.

    ``pip install`` does this for an installed tool; an editable checkout run with
    PYTHONDONTWRITEBYTECODE set (as on these machines) would otherwise recompile every module
    in every measured process, about 25 ms that no user pays.
    """
    import compileall
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    for folder in ("symfonic_cli", "benchmarks"):
        compileall.compile_dir(root / folder, quiet=1, rx=re.compile(r"/out/"))
