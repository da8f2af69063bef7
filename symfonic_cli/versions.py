"""What ``symfonic --version`` prints: symfonic's version and the LangGraph packages it runs with.

Read from the installed distributions' metadata, never by importing them, so the line stays instant.
"""

from __future__ import annotations

# The packages whose formats symfonic reads and writes, in the order they are printed.
RUNS_WITH = (
    "langgraph",
    "langgraph-checkpoint",
    "langgraph-checkpoint-sqlite",
    "langgraph-checkpoint-postgres",
    "langgraph-checkpoint-mongodb",
)


def installed(name: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return None


def version_text() -> str:
    import platform

    from symfonic_cli import __version__

    lines = [f"symfonic {__version__}"]
    for name in RUNS_WITH:
        lines.append(f"  {name} {installed(name) or 'not installed'}")
    lines.append(f"  python {platform.python_version()}")
    return "\n".join(lines)
