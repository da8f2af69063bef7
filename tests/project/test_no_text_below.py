"""The library below the front ends writes no text for a person (issue #35 item 2): no module under
api/ and cli/ but the output floor (render/, pager.py, progress.py: how text is written) and the
Environment (which holds the streams) touches ``stdout``/``stderr``, prints, writes to a stream or
calls a writer of render/; a changing run tells its caller typed events (changes/report.py) and the
front end renders them. A write that is data, not text for a person (a receipt, a bundle, a lock
file), says so on its line: ``# data: <why>``. The api/ package renders nothing at all."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.project.test_layout import FLOORS

PACKAGE = Path(__file__).resolve().parents[2] / "symfonic_cli"
OUTPUT = {"render", "pager", "progress", "environment"}  # the writers themselves, and the streams' holder
BELOW = [name for floor, names in FLOORS if floor not in ("front ends",) for name in sorted(names) if name and name not in OUTPUT]
STREAMS = {"stdout", "stderr"}
WRITERS = {"write", "writelines", "print", "warn", "write_records", "write_pairs", "write_table", "write_document",
           "write_json", "console", "print_json"}


def _modules() -> list[Path]:
    found = []
    for name in BELOW:
        package, module = PACKAGE / name, PACKAGE / f"{name}.py"
        found += sorted(package.rglob("*.py")) if package.is_dir() else [module] if module.exists() else []
    return found


def _writes(path: Path, root: Path = PACKAGE.parent) -> list[str]:
    """Each line that touches a stream or calls a writer without a ``# data:`` reason."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    found = []
    for node in ast.walk(ast.parse(text)):
        what = None
        if isinstance(node, ast.Attribute) and node.attr in STREAMS:
            what = f".{node.attr}"
        elif isinstance(node, ast.keyword) and node.arg in STREAMS:
            what = f"{node.arg}="
        elif isinstance(node, ast.Call):
            fn = node.func
            name = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else None
            if name in WRITERS:
                what = f"{name}()"
        if what is None:
            continue
        span = lines[node.lineno - 1:(node.end_lineno or node.lineno)]
        if not any("# data:" in line for line in span):
            found.append(f"{path.relative_to(root)}:{node.lineno}: {what}: {lines[node.lineno - 1].strip()}")
    return sorted(set(found))


def test_the_floors_below_the_front_ends_are_checked():
    names = {p.relative_to(PACKAGE).parts[0].removesuffix(".py") for p in _modules()}
    # The feature packages of issue #35 item 2, and the floors under them, are all read.
    assert {"changes", "erase", "export", "storage", "prune", "retention", "migrate", "memory", "search", "listing", "history", "compat",
            "stores", "model", "selection", "suggestions", "api"} <= names
    assert not names & {"cli", "render", "browse", "mcp"}


def test_nothing_below_the_front_ends_writes_text_for_a_person():
    found = [line for path in _modules() for line in _writes(path)]
    assert found == [], "\n".join(found)


def test_the_check_finds_a_write(tmp_path):
    """The check itself: a driver writing a plan line, a stream handed on, a render writer, print."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "def run(env, out, render):\n"
        "    env.stdout.write('erase plan\\n')\n"
        "    open_store(loc, stderr=env.stderr)\n"
        "    out.write('dry run: nothing deleted\\n')\n"
        "    render.write_records([], fmt='json')\n"
        "    print('x')\n"
        "    fh.write(b'{}')  # data: the receipt file\n",
        encoding="utf-8",
    )
    found = _writes(probe, tmp_path)
    assert [f.split(": ", 2)[1] for f in found] == [".stdout", "write()", ".stderr", "stderr=", "write()", "write_records()", "print()"]
