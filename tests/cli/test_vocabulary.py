"""One home for each word (issue #22): every set of value words (formats, run states, sorts,
speakers, colour modes, findings, shells) and every group's help is defined once, in
``symfonic_cli/vocabulary.py``, and the typer commands, the quick route, TAB completion, the help
and the logic all read that one definition. The ``thread`` group is owned by ``cli/thread.py``."""

from __future__ import annotations

import ast
from pathlib import Path

import click
import pytest
from typer.main import get_command

import symfonic_cli
from symfonic_cli import vocabulary as v
from tests.support.cli import run

PACKAGE = Path(symfonic_cli.__file__).parent
WORD_SETS = {name: getattr(v, name) for name in ("FORMATS", "STATUSES", "SORTS", "ROLES", "SPEAKERS", "COLOR_MODES", "FINDINGS", "SHELLS")}


def _tree() -> click.Group:
    """The real click tree, as ``main()`` builds it for a command line (helptext applied)."""
    from symfonic_cli.cli.helptext import describe
    from symfonic_cli.cli.root import build_app
    from symfonic_cli.cli.rootopts import everywhere

    root = get_command(build_app(None))
    everywhere(root)
    describe(root)
    return root


def _options(root: click.Group):
    """(command path, option) for every option of every command, the root's included."""
    out = []

    def visit(cmd, path):
        out.extend((path, p) for p in cmd.params if isinstance(p, click.Option))
        for name, sub in getattr(cmd, "commands", {}).items():
            visit(sub, (*path, name))

    visit(root, ())
    return out


def test_typer_help_shows_the_vocabularys_words_for_every_option_that_takes_them():
    seen = set()
    for path, p in _options(_tree()):
        words = next((w for w in (v.option_words(path, o) for o in p.opts) if w), None)
        if words is None:
            continue
        assert words == next((v.OPTION_WORDS[o] for o in p.opts if o in v.OPTION_WORDS), None) or path in v.RECORD_COMMANDS
        assert p.metavar == v.metavar(words), (path, p.opts, p.metavar)
        seen.add(max(p.opts, key=len))
    assert seen == {"--format", "--status", "--sort", "--speaker", "--color"}


def test_logic_reads_the_same_word_sets():
    from symfonic_cli import environment
    from symfonic_cli.cli import common
    from symfonic_cli.compat import report
    from symfonic_cli.model import nexttasks, triggers
    from symfonic_cli.transcript import rows

    assert triggers.STATUSES is v.STATUSES and nexttasks.STATUSES is v.STATUSES
    assert rows.ROLES is v.ROLES and v.SPEAKERS == (*v.ROLES, v.ALL)
    assert report.FINDINGS is v.FINDINGS and environment.COLOR_MODES is v.COLOR_MODES
    assert common.FORMATS is v.FORMATS
    assert v.DEFAULT_SORT == v.SORTS[0] and set(v.DEFAULT_FAIL_ON) <= set(v.FINDINGS)


@pytest.mark.parametrize(
    "argv, option, words",
    [
        (["threads", "list", "--sort", "NEWEST"], "--sort", v.SORTS),
        (["threads", "list", "--status", "done,bogus"], "--status", v.STATUSES),
        (["store", "info", "--format", "yaml"], "--format", v.FORMATS),
        (["compat", "report", "--format", "yaml"], "--format", v.FORMATS),
    ],
)
def test_both_routes_refuse_a_word_naming_the_vocabulary(sqlite_master, argv, option, words):
    res = run(*argv, "--store", str(sqlite_master))
    assert res.code == 2 and f"unknown {option}" in res.err and ", ".join(words) in res.err, res.err


def test_completion_offers_the_vocabularys_words():
    from symfonic_cli import complete

    tree = complete.build_tree()
    lists = tree["commands"]["threads"]["commands"]["list"]["options"]
    shows = tree["commands"]["transcript"]["commands"]["show"]["options"]
    compat = tree["commands"]["compat"]["commands"]["report"]["options"]
    assert lists["--format"]["choices"] == lists["-f"]["choices"] == list(v.RECORD_FORMATS)  # threads list writes CSV too
    assert compat["--format"]["choices"] == list(v.FORMATS)
    assert lists["--status"]["choices"] == list(v.STATUSES)
    assert lists["--sort"]["choices"] == list(v.SORTS)
    assert shows["--speaker"]["choices"] == list(v.SPEAKERS)
    assert tree["options"]["--color"]["choices"] == lists["--color"]["choices"] == list(v.COLOR_MODES)
    assert complete.candidates(tree, ["threads", "list", "--sort"], "first") == ["first-activity"]
    # The cache is rebuilt when the vocabulary changes.
    assert "vocabulary:" in complete._stamp()


def test_quick_route_is_built_from_the_typer_routes_table():
    from symfonic_cli.cli import compat, fast, optionspec, threads

    for words, specs in optionspec.QUICK.items():
        spelled = {o: name for name, spec in specs.items() for o in spec.get("opts", ())}
        assert {**fast.ROUTES[words], **fast.FLAGS.get(words, {})} == spelled
        group = {"threads": threads.app, "compat": compat.app}.get(words[0])
        if group is None:
            continue
        params = {p.name: p for p in get_command(group).commands[words[1]].params if p.name != "help"}
        # compat report's KEY argument and thread options are typer's alone (optionspec.TYPER_ONLY).
        typer_only = set(optionspec.TYPER_ONLY.get(words, {}).values()) | ({"key"} if words == ("compat", "report") else set())
        assert set(params) == set(specs) | typer_only, words
        for name, spec in specs.items():
            if spec.get("kind") == "argument":  # threads search's TEXT (its help: the --help page)
                assert params[name].required, name
                continue
            assert tuple(params[name].opts) == spec["opts"] and params[name].help == spec["help"], name
    assert fast.ENV_PARAMS == {"store": optionspec.STORE["env"], "envelope_key": "SYMFONIC_ENVELOPE_KEY"}
    assert fast.MULTI_PARAMS == {"status"} and fast.INT_PARAMS == {"limit"}
    assert fast.ARGUMENTS == {("threads", "search"): "text"}


def test_group_help_lives_once():
    from symfonic_cli.cli import groups, helptext

    assert groups.SUMMARIES is v.GROUP_HELP and set(v.GROUP_HELP) == set(groups.GROUPS)
    assert not hasattr(helptext, "GROUP_HELP")
    root = _tree()
    for name, cmd in root.commands.items():
        assert cmd.help == v.GROUP_HELP[name], name
    assert v.GROUP_HELP["thread"] in run("thread", "--help", env={"COLUMNS": "400"}).out.replace("\n  ", " ")


def test_thread_group_is_owned_by_thread_py():
    from symfonic_cli.cli import erase, export, groups, history, prune, rewind, thread

    for module in (erase, export, history, prune, rewind):
        assert module.app is thread.app, module.__name__
        assert not hasattr(module, "register"), module.__name__  # no no-op register any more
    assert set(groups.GROUP_EXTENSIONS) == {"thread"}
    commands = get_command(_tree_app()).commands["thread"].commands
    assert set(commands) == {"show", "history", "diff", "rewind", "export", "erase", "prune"}


def _tree_app():
    from symfonic_cli.cli.root import build_app

    return build_app("thread")


def _spelled_out(source: str, where: str = "") -> list[tuple[str, str]]:
    """(place, word set) for each tuple, list or set literal of a word set in ``source``, and each
    string holding one as [a|b|c], a|b|c, 'a, b, c' or 'a, b or c' (the module docstring aside)."""
    forms = {}
    for name, words in WORD_SETS.items():
        for form in (v.metavar(words), "|".join(words), v.one_of(words), v.listed(words)):
            forms[form] = name
    tree = ast.parse(source)
    first = tree.body[0] if tree.body else None
    docstring = first.value if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) else None
    found = []
    for node in ast.walk(tree):
        place = f"{where}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and len(node.elts) >= 2:
            if all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
                values = {e.value for e in node.elts}
                found += [(place, name) for name, words in WORD_SETS.items() if values == set(words)]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node is not docstring:
            found += [(place, name) for form, name in forms.items() if form in node.value]
    return sorted(set(found))


def test_no_word_set_is_spelled_out_again():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name != "vocabulary.py":
            found += _spelled_out(path.read_text(encoding="utf-8"), str(path.relative_to(PACKAGE)))
    assert not found, found


def test_the_scan_finds_each_shape_of_a_duplicate():
    sample = (
        '"""Module docstring: table, text, json or jsonl is allowed here."""\n'
        'A = ("table", "text", "json", "jsonl")\n'
        'B = ["jsonl", "json", "text", "table"]\n'
        'C = {"auto", "always", "never"}\n'
        'D = "one of [interrupted|error|pending|done]"\n'
        'def f():\n    """user, assistant, tool, system, other or all"""\n'
        'E = f"use one of: bash, zsh, fish"\n'
        'F = ("table", "text")\n'
    )
    found = _spelled_out(sample)
    assert found == [(":2", "FORMATS"), (":3", "FORMATS"), (":4", "COLOR_MODES"), (":5", "STATUSES"),
                     (":7", "ROLES"), (":7", "SPEAKERS"), (":8", "SHELLS")], found


def test_shell_scripts_cover_the_shells():
    from symfonic_cli import completions

    assert tuple(completions.SHELLS) == v.SHELLS


def test_vocabulary_imports_nothing():
    tree = ast.parse((PACKAGE / "vocabulary.py").read_text(encoding="utf-8"))
    assert not [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
