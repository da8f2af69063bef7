"""The documentation cannot drift from the tool: README's tour and every guide run as written on a
fresh demo store, the CLI reference and man page equal what the real ``--help`` prints, README
stays a short front page, and ``--version`` names the packages the tool runs with."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.docpages import GUIDES, README, ROOT, command_lines, interactive, prepare, shown_text


def _run_page(path: Path, tmp_path: Path) -> list[str]:
    """Run a page's lines in order in a folder holding a fresh demo store; the failures."""
    env = dict(os.environ, COLUMNS="120", NO_COLOR="1", LC_ALL="C.UTF-8", TERM="dumb")
    for name in ("SYMFONIC_STORE", "SYMFONIC_TZ", "SYMFONIC_DEBUG", "SYMFONIC_CONFIG", "XDG_CONFIG_HOME", "LANGGRAPH_AES_KEY"):
        env.pop(name, None)
    env["HOME"] = str(tmp_path / "home")  # no one's own config file
    bindir = str(Path(sys.executable).parent)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    failures = []
    for line, expected in command_lines(path):
        if interactive(line):
            continue  # a full-screen view needs a terminal: tests/cli/test_terminal_docs.py
        done = subprocess.run(
            ["bash", "-o", "pipefail", "-c", line], cwd=tmp_path, env=env,
            capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
        )
        if done.returncode != expected or "Traceback" in done.stderr:
            failures.append(f"{line!r}: exit {done.returncode} (expected {expected}): {done.stderr.strip()[-400:]}")
        promised = shown_text(line)
        if promised is not None and promised not in done.stdout:
            failures.append(f"{line!r}: does not show {promised!r}: {done.stdout.strip()[-400:]}")
    return failures


def test_readme_tour_runs_as_written(tmp_path):
    lines = command_lines(README)
    assert any("symfonic demo" in line for line, _ in lines), "README's tour starts from the demo store"
    assert len(lines) >= 8, lines
    assert _run_page(README, tmp_path) == []


@pytest.fixture(scope="session")
def demo_store(demo_master) -> Path:
    """``symfonic demo``'s store, made once; each page gets a fresh copy."""
    return demo_master


@pytest.mark.parametrize("page", GUIDES, ids=[p.stem for p in GUIDES])
def test_guide_runs_as_written(page, tmp_path, demo_store):
    assert command_lines(page), f"{page.name} has no symfonic command line"
    prepare(page, tmp_path, demo_store)
    assert _run_page(page, tmp_path) == []


def test_readme_python_example_runs(tmp_path, demo_store):
    import shutil

    shutil.copyfile(demo_store, tmp_path / "demo.db")
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert blocks
    for block in blocks:
        done = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip(), "the example prints what it read"


def test_the_guides_cover_the_runbooks():
    names = {p.stem for p in GUIDES}
    assert names >= {"customer-says", "stuck-thread", "erase-a-person", "access-request", "retention",
                     "store-growing", "rolling-deploy", "move-a-store", "encrypted-stores"}, names


def test_readme_is_a_front_page():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200 and len(text.encode()) <= 16 * 1024
    # its links into docs/ resolve
    for target in re.findall(r"\]\((docs/[^)#]+)", text):
        assert (ROOT / target).exists(), target


def test_readme_says_how_long_the_suite_takes_and_where_the_quick_subset_is():
    text = " ".join(README.read_text(encoding="utf-8").split())
    assert "about 10 minutes" in text
    quick = re.search(r"`(python -m pytest -m \"[^`]+\")`", text)
    assert quick and "not slow" in quick.group(1) and "not pty" in quick.group(1), "README names the quick subset's command"
    assert quick.group(1).split('"')[1] in " ".join((ROOT / "docs" / "testing.md").read_text(encoding="utf-8").split())


def test_the_all_extra_installs_every_extra():
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    (spec,) = extras["all"]
    named = set(re.fullmatch(r"symfonic\[(.+)\]", spec).group(1).split(","))  # type: ignore[union-attr]
    assert named == set(extras) - {"all", "test"}, named


def test_ci_runs_the_readme_test_command_verbatim():
    blocks = re.findall(r"```bash\n(.*?)\n```", README.read_text(encoding="utf-8"), re.S)
    setup, tests = blocks[0], blocks[1]  # the two commands for a fresh machine, in this order
    assert "symfonic demo" in setup and "pytest" in tests and "\n" not in tests
    ci = [line for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]
    assert ci[-1] == tests


def test_every_relative_link_in_docs_resolves():
    for page in [README, *(ROOT / "docs").rglob("*.md"), ROOT / "CHANGELOG.md"]:
        for target in re.findall(r"\]\(([^)#:\s]+\.md)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            assert (page.parent / target).resolve().exists(), f"{page.relative_to(ROOT)} -> {target}"


def test_cli_reference_and_man_page_are_current():
    # docs/generate.py renders every command's real --help; stale files fail, naming the command to run.
    done = subprocess.run([sys.executable, str(ROOT / "docs" / "generate.py"), "--check"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr


def _defined_names() -> set[str]:
    """Every function, class and module-level name the package and the suite define."""
    import ast

    names: set[str] = set()
    for path in [*(ROOT / "symfonic_cli").rglob("*.py"), *(ROOT / "tests").rglob("*.py")]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def test_the_recipes_name_what_exists():
    # docs/contributing.md's recipes (issue #46 item 5): each ends with the test or check proving
    # it, and every file, test and name they mention is in the tree.
    text = (ROOT / "docs" / "contributing.md").read_text(encoding="utf-8")
    recipes = text[text.index("## Recipes"):]
    recipes = recipes[:recipes.find("\n## ", 5)] if "\n## " in recipes[5:] else recipes
    paragraphs = [p for p in recipes.split("\n\n") if p.startswith("**Add ")]
    assert len(paragraphs) == 3 and all("Proved by:" in p for p in paragraphs)
    package = ROOT / "symfonic_cli"
    names = _defined_names()
    missing = []
    for token in re.findall(r"`([^`]+)`", recipes):
        if " " in token or "<" in token or token.startswith("-") or token in ("mypy",):
            continue
        path, _, test = token.partition("::")
        if path.startswith("tests/"):
            found = (ROOT / path).exists() and (not test or f"def {test}(" in (ROOT / path).read_text(encoding="utf-8"))
        elif path.endswith((".py", "/")):
            found = (package / path).exists() if "/" in path.rstrip("/") or path.endswith("/") else any(package.rglob(path))
        else:
            found = token.rpartition(".")[2] in names
        if not found:
            missing.append(token)
    assert missing == []


def test_man_page_is_shipped_in_the_package():
    from importlib.resources import files

    page = files("symfonic_cli").joinpath("data/symfonic.1").read_text(encoding="utf-8")
    assert page.startswith(".TH SYMFONIC 1")
    assert "symfonic thread erase" in page


def test_changelog_has_an_unreleased_section_then_versions():
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## \[([^\]]+)\]", text, re.M)
    assert headings and headings[0] == "Unreleased", headings
    from symfonic_cli import __version__

    assert __version__ in headings


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_names_symfonic_and_the_langgraph_packages(flag):
    from importlib.metadata import version

    done = subprocess.run([sys.executable, "-m", "symfonic_cli", flag], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    from symfonic_cli import __version__

    lines = done.stdout.splitlines()
    assert lines[0] == f"symfonic {__version__}"
    for name in ("langgraph", "langgraph-checkpoint", "langgraph-checkpoint-sqlite"):
        assert f"  {name} {version(name)}" in lines, lines


def test_command_lines_reader_reads_what_it_should():
    # The reader itself: a continued line is one command, an exit comment is read, prose is not.
    page = ROOT / "docs" / "guide"
    sample = "text\n```bash\nsymfonic threads list \\\n  --store demo.db  # exit 3\necho hi\n```\n"
    tmp = Path(os.environ.get("TMPDIR", "/tmp")) / f"docs-reader-{os.getpid()}.md"
    tmp.write_text(sample, encoding="utf-8")
    try:
        assert command_lines(tmp) == [("symfonic threads list    --store demo.db  # exit 3", 3)]
    finally:
        tmp.unlink()
    assert shown_text('symfonic thread show --store demo.db K  # it shows "approve the refund"') == "approve the refund"
    assert shown_text("symfonic thread show --store demo.db K  # exit 3") is None
    assert page.exists()


def test_the_refund_story_reads_the_refund_thread(demo_store):
    """The guides answering "the bot promised me a refund for order 1042" read the thread their
    search finds first, and say what it shows (``# shows``, checked where the pages run)."""
    import json

    found = subprocess.run([sys.executable, "-m", "symfonic_cli", "threads", "search", "--store", str(demo_store),
                            "order 1042", "-f", "json"], capture_output=True, text=True, check=True)
    first = json.loads(found.stdout)[0]["key"]
    for name in ("customer-says", "browse"):
        lines = [line for line, _ in command_lines(ROOT / "docs" / "guide" / f"{name}.md")]
        assert any(shown_text(line) == "I can refund 42 EUR" for line in lines), name
        keys = {key for line in lines for key in re.findall(r"\b(?:acme|globex):[\w-]+:[\w-]+", line)}
        assert keys == {first}, (name, first, keys)
