"""A new output format is its writer in render/writers.py and its word in vocabulary.py, nothing
else (issue #46 item 4): this test copies the package, adds a toy format ``toy`` there and only
there, and shows that every command offers it (the typer route's --help and choices, the quick
route's, TAB) and writes with it: records as ``field=value`` pairs (tab apart) a line, a document as one pair a
leaf. It runs the copy in a Python process of its own (a fresh import of the edited package), and
once through the real entry point (``python -m symfonic_cli``), whose ``--help`` docs/generate.py
turns into the CLI reference and the man page. The quick tests below hold the rule in place: every
word has its writers, and no module outside render/ compares a format with a program's word (the
commands choose only between their views for a reader, vocabulary.READER_FORMATS).
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import symfonic_cli
from tests.api.test_change_goldens import STORE

REPO = Path(__file__).resolve().parents[2]
KEY = "acme:_:s-001"
WRITER = '''

# A toy format for a program, added by tests/cli/test_new_format.py.
def _toy_line(rec):
    return "\\t".join(f"{k}={json_dumps(v)}" for k, v in rec.items()) + "\\n"


def _toy_records(records, columns, out, **_layout):
    n = 0
    for rec in records:
        out.write(_toy_line(json_value(rec)))
        n += 1
    return n


def _toy_document(doc, out):
    out.write("".join(_toy_line({p: v}) for p, v in _leaves(json_value(doc), "")))


RECORD_WRITERS["toy"] = _toy_records
DOCUMENT_WRITERS["toy"] = _toy_document
'''
# Every command taking --format, with arguments that run it on the goldens' store ({db}); the
# quick route's commands are also run through cli/fast.py.
CASES: dict[str, tuple[str, ...]] = {
    "threads list": ("threads", "list", "-s", "{db}"),
    "threads search": ("threads", "search", "-s", "{db}", "refund"),
    "store info": ("store", "info", "-s", "{db}"),
    "store list": ("store", "list"),
    "store usage": ("store", "usage", "-s", "{db}"),
    "transcript show": ("transcript", "show", "-s", "{db}", KEY),
    "compat report": ("compat", "report", "-s", "{db}"),
    "compat show": ("compat", "show", "-s", "{db}", KEY),
    "thread show": ("thread", "show", "-s", "{db}", KEY),
    "thread history": ("thread", "history", "-s", "{db}", KEY),
    "thread diff": ("thread", "diff", "-s", "{db}", KEY, "-2", "-1"),
    "thread export": ("thread", "export", "-s", "{db}", KEY, "--output", "{dir}/bundle"),
    "thread erase": ("thread", "erase", "-s", "{db}", "--tenant", "globex", "--all-sessions", "--yes", "--operator", "ops@example.com"),
    "thread prune": ("thread", "prune", "-s", "{db}", "--all", "--keep", "2", "--yes", "--operator", "ops@example.com"),
    "thread rewind": ("thread", "rewind", "-s", "{db}", KEY, "--to", "-2", "--idle-for", "0", "--yes", "--operator", "ops@example.com"),
    "migrate": ("migrate", "--from", "{db}", "--to", "{dir}/copy.db", "--all", "--init-target"),
}
EXTRA = {  # the same commands' other views
    "transcript show --resume-window": (*CASES["transcript show"], "--resume-window"),
    "transcript show --retained": (*CASES["transcript show"], "--retained"),
    "compat report --by-thread": (*CASES["compat report"], "--by-thread"),
    "thread erase --dry-run": ("thread", "erase", "-s", "{db}", "--tenant", "acme", "--all-sessions", "--dry-run"),
    "thread prune --dry-run": ("thread", "prune", "-s", "{db}", "--all", "--keep", "2", "--dry-run"),
    "thread rewind --dry-run": ("thread", "rewind", "-s", "{db}", KEY, "--to", "-2", "--idle-for", "0", "--dry-run"),
}
# Offered but not yet written by the writer (none: a command that joins this set says why).
PENDING: set[str] = set()
QUICK = ("threads list", "threads search", "store info", "compat report")

SCRIPT = '''
import json, os, shutil, sys
from symfonic_cli import complete, vocabulary
from symfonic_cli.cli import fast
from symfonic_cli.environment import Environment
from tests.support.cli import run
import io

cases, quick, store, folder = json.loads(sys.argv[1])
tree = complete.build_tree()
found = {}
def walk(node, path):
    if "--format" in node["options"]:
        found[" ".join(path)] = {"choices": node["options"]["--format"]["choices"],
                                 "tab": complete.candidates(tree, [*path, "--format"], "to")}
    for name, sub in node.get("commands", {}).items():
        walk(sub, (*path, name))
walk(tree, ())
config = os.path.join(folder, "stores.toml")
with open(config, "w") as f:
    f.write('[stores.demo]\\nurl = "sqlite:///' + store + '"\\n')
ran = {}
for name, args in cases.items():
    where = os.path.join(folder, name.replace(" ", "_"))
    os.makedirs(where)
    db = os.path.join(where, "store.db")
    shutil.copyfile(store, db)
    argv = [a.format(db=db, dir=where) for a in args]
    helped = run(*argv[:2] if argv[0] != "migrate" else argv[:1], "--help", env={"COLUMNS": "200"})
    r = run("--tz", "UTC", *argv, "--format", "toy", env={"COLUMNS": "80", "SYMFONIC_CONFIG": config})
    entry = {"code": r.code, "out": r.out, "err": r.err, "help": helped.out}
    if name in quick:
        out, err = io.StringIO(), io.StringIO()
        entry["quick"] = fast.run([*argv, "--format", "toy", "--tz", "UTC"], Environment(stdout=out, stderr=err, stdin=io.StringIO()))
        entry["quick_out"] = out.getvalue()
    ran[name] = entry
print(json.dumps({"formats": list(vocabulary.FORMATS), "found": found, "ran": ran}))
'''


def _with_toy(tmp_path: Path) -> Path:
    """The package copied, with ``toy`` added to vocabulary.py's formats and its writer to writers.py."""
    root = tmp_path / "pkg"
    shutil.copytree(Path(symfonic_cli.__file__).parent, root / "symfonic_cli", ignore=shutil.ignore_patterns("__pycache__"))
    vocabulary = root / "symfonic_cli" / "vocabulary.py"
    text = vocabulary.read_text(encoding="utf-8")
    old = 'FORMATS = ("table", "text", "json", "jsonl")'
    assert old in text
    vocabulary.write_text(text.replace(old, 'FORMATS = ("table", "text", "json", "jsonl", "toy")'), encoding="utf-8")
    writers = root / "symfonic_cli" / "render" / "writers.py"
    writers.write_text(writers.read_text(encoding="utf-8") + WRITER, encoding="utf-8")
    return root


def _run_copy(root: Path, folder: Path) -> dict:
    """The script on the copy, in a process of its own (the copy first on the path, then the tests)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(REPO)]), "XDG_CACHE_HOME": str(folder / "cache"),
           "NO_COLOR": "1"}
    env = {k: v for k, v in env.items() if not k.startswith("SYMFONIC_") or k.startswith(("SYMFONIC_TEST_", "SYMFONIC_REQUIRE_"))}
    cases = {**CASES, **EXTRA}
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, json.dumps([cases, QUICK, str(STORE), str(folder)])], cwd=root,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    return json.loads(out)


def test_the_installed_command_and_its_reference_offer_the_added_format(tmp_path):
    """The same toy format through the real entry point (``python -m symfonic_cli``, a process of
    its own) and in the CLI reference and man page, which docs/generate.py makes from that very
    ``--help``."""
    import importlib.util

    root = _with_toy(tmp_path)
    (root / "docs").mkdir()
    shutil.copyfile(REPO / "docs" / "generate.py", root / "docs" / "generate.py")
    spec = importlib.util.spec_from_file_location("toy_generate", root / "docs" / "generate.py")
    assert spec is not None and spec.loader is not None
    generate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generate)
    assert generate.ROOT == root  # its --help runs are the copy's
    pages = [(["thread", "history"], generate._help(["thread", "history"])), (["store", "info"], generate._help(["store", "info"]))]
    for words, text in pages:
        assert "--format [table|text|json|jsonl|toy" in text, words
    assert generate.cli_markdown(pages).count("|toy") == generate.man_page(pages, "0").count("|toy") == 2
    db = tmp_path / "store.db"
    shutil.copyfile(STORE, db)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYMFONIC_")}
    done = subprocess.run([sys.executable, "-m", "symfonic_cli", "--tz", "UTC", "thread", "history", "-s", str(db), KEY,
                           "-f", "toy"], cwd=root, env={**env, "XDG_CONFIG_HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path), "NO_COLOR": "1"},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert _wrong("thread history", {"help": pages[0][1], "code": 0, "out": done.stdout, "err": done.stderr}) is None
    assert len(_pairs(done.stdout)) > 1 and all(line.startswith("checkpoint_id=") for line in _pairs(done.stdout))


def test_every_format_word_has_its_writers():
    """A word of --format is a reader's (table, text: a command may lay it out) or a program's,
    and a program's has both writers, so any command can hand it records or a document."""
    from symfonic_cli import vocabulary as v
    from symfonic_cli.render import writers

    assert set(v.READER_FORMATS) <= set(v.FORMATS) <= set(v.RECORD_FORMATS)
    for word in v.RECORD_FORMATS:
        assert word in writers.RECORD_WRITERS, word
        assert writers.is_data(word) == (word not in v.READER_FORMATS), word
        if writers.is_data(word):
            assert word in writers.DOCUMENT_WRITERS, word
    assert set(writers.STREAM_WRITERS) <= set(writers.DOCUMENT_WRITERS)


def _names_format(node: ast.AST) -> bool:
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return "fmt" in name or "format" in name


def _words(node: ast.AST) -> set[str]:
    items = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]
    return {i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)}


def test_no_command_branches_on_a_programs_format():
    """Outside render/, a comparison of a format names only the reader's words (which view a
    command lays out); a program's format is its writer's alone (render/writers.py)."""
    from symfonic_cli import vocabulary as v

    programs = set(v.RECORD_FORMATS) - set(v.READER_FORMATS)
    package = Path(symfonic_cli.__file__).parent
    found = []
    for path in sorted(package.rglob("*.py")):
        if path.parent.name == "render" or path.name == "vocabulary.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                if any(_names_format(n) for n in sides) and set().union(*map(_words, sides)) & programs:
                    found.append(f"{path.relative_to(package)}:{node.lineno}")
    assert found == []


def _pairs(text: str) -> list[str]:
    return [line for line in text.splitlines() if line]


def test_a_format_added_in_the_writers_and_the_vocabulary_works_on_every_command(tmp_path):
    folder = tmp_path / "runs"
    folder.mkdir()
    got = _run_copy(_with_toy(tmp_path), folder)
    assert got["formats"][-1] == "toy"
    # Offered everywhere: every command with --format (none left out of CASES), on TAB and in --help.
    assert set(got["found"]) == set(CASES)
    for name, found in got["found"].items():
        assert "toy" in found["choices"], name
        assert found["tab"] == ["toy"], name
    wrong = {name: _wrong(name, ran) for name, ran in got["ran"].items()}
    assert {name: why for name, why in wrong.items() if why and name not in PENDING} == {}
    assert {name for name, why in wrong.items() if why} == set(PENDING), "a pending command works now: take it off PENDING"


def _wrong(name: str, ran: dict) -> str | None:
    """What is wrong with a command's run in the toy format (None: nothing)."""
    if "toy" not in ran["help"]:
        return "--help does not offer it"
    if ran["code"] != 0:
        return f"exit {ran['code']}: {ran['err']}"
    lines = _pairs(ran["out"])
    if not lines:
        return "wrote nothing"
    # Every line the command wrote is the toy writer's: field=value pairs, a tab apart, values in JSON.
    for line in lines:
        for pair in line.split("\t"):
            field, eq, value = pair.partition("=")
            try:
                json.loads(value)
            except ValueError:
                return f"not the toy writer's: {line!r}"
            if not eq:
                return f"not the toy writer's: {line!r}"
    if name in QUICK and (ran["quick"] is not True or ran["quick_out"] != ran["out"]):
        return "the quick route does not write the same"
    return None
