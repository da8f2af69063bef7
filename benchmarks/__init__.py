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
    # The libraries too: installed with --no-compile (docs/contributing.md's set-up), typer, click
    # and rich were compiled again in every measured process (about 45 ms), which the raw side,
    # importing only the standard library, never paid.
    import importlib.util

    for name in ("typer", "click", "rich", "shellingham", "ormsgpack", "typing_extensions"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin:
            place = Path(spec.origin)
            if place.name == "__init__.py":
                compileall.compile_dir(place.parent, quiet=1)
            else:
                compileall.compile_file(place, quiet=1)
