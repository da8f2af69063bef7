"""One description per store kind (issue #35 item 5, symfonic_cli/kinds/): the schemes, the
backends and their drivers, the options each backend takes and the residual-data notes come from
it; a store option no kind takes (a typo in the config file) is an error, never ignored."""

from __future__ import annotations

import inspect
import json

from symfonic_cli import kinds
from symfonic_cli.location import parse_location
from tests.support.cli import run


def test_every_backend_takes_exactly_the_options_its_kind_declares():
    from importlib import import_module

    for name, kind in kinds.KINDS.items():
        opener = import_module(kind.backend).open_store
        params = inspect.signature(opener).parameters
        assert not any(p.kind is p.VAR_KEYWORD for p in params.values()), name  # no **options swallowing unknowns
        assert set(params) - {"location", "writable"} == set(kind.options), name


def test_every_scheme_names_its_kind_and_the_notes_come_from_the_table():
    from symfonic_cli.changes import plan
    from symfonic_cli.prune import records

    for name, kind in kinds.KINDS.items():
        for scheme in kind.schemes:
            url = f"{scheme}:///x.db" if name == "sqlite" else f"{scheme}://h/db"
            assert parse_location(url).kind == name, scheme
        assert plan.RESIDUAL[name] == kind.erase_residual and records.RESIDUAL[name] == kind.prune_residual


def test_a_config_key_no_store_takes_is_exit_2_naming_it(sqlite_master, tmp_path):
    config = tmp_path / "config.toml"
    config.write_text(f'[stores.demo]\nurl = "sqlite:///{sqlite_master}"\npg_shcema = "app"\n')
    r = run("threads", "list", "-s", "demo", "-f", "json", env={"SYMFONIC_CONFIG": str(config)})
    assert r.code == 2 and "unknown store option 'pg_shcema'" in r.err and r.out == "", r.err
    # A known option of another kind is no error: it is not passed to the SQLite file.
    config.write_text(f'[stores.demo]\nurl = "sqlite:///{sqlite_master}"\npg_schema = "app"\n')
    r = run("threads", "list", "-s", "demo", "-f", "json", env={"SYMFONIC_CONFIG": str(config)})
    assert r.code == 0 and json.loads(r.out), r.err
    r = run("--pg-schema", "app", "threads", "list", "-s", str(sqlite_master), "-f", "json")
    assert r.code == 0, r.err


def test_the_python_api_refuses_an_option_no_store_takes(sqlite_master):
    import pytest

    import symfonic_cli
    from symfonic_cli.errors import UsageError

    with pytest.raises(UsageError, match="unknown store option 'pg_shcema'"):
        symfonic_cli.open_store(str(sqlite_master), pg_shcema="app")


def test_location_reads_each_kinds_grammar_from_kinds_and_names_no_kind():
    # location.py holds no kind's grammar (the SQLite URL and path, libpq's key/value string): it
    # reads each kind's from kinds/; its code (docstrings and messages aside) names no kind.
    import ast

    from symfonic_cli import location

    tree = ast.parse(inspect.getsource(location))
    words = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    assert not set(kinds.KINDS) & words, set(kinds.KINDS) & words
    assert not {"LIBPQ_KEYWORDS", "conninfo_pairs", "looks_like_conninfo"} & names
    # Each form parsed by its kind's grammar, as before the move.
    assert parse_location("host=h dbname=x user=u").kind == "postgres"
    assert parse_location("sqlite:////abs/x.db").path == "/abs/x.db"
    assert parse_location("./a=b.db").kind == "sqlite"
    for raw, kind in (("host=h nosuch=1", "postgres"), ("sqlite://x.db", "sqlite"), ("postgresql://a@b@h/db", "postgres")):
        try:
            parse_location(raw)
        except Exception as exc:  # the kind's grammar refuses it, with its exit code
            assert exc.exit_code in (2, 4), (raw, exc)  # type: ignore[attr-defined]
        else:
            raise AssertionError(f"{raw} ({kind}) was accepted")


def test_no_module_outside_the_kinds_and_their_backends_switches_on_a_kind():
    # Adding a kind touches kinds/ and stores/<kind>/ only: no other module compares with a kind's name.
    import ast
    from pathlib import Path

    import symfonic_cli

    root = Path(symfonic_cli.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        part = path.relative_to(root).parts[0]
        if part in ("stores", "kinds"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in kinds.KINDS:
                found.append(f"{path.relative_to(root)}:{node.lineno}: {node.value!r}")
    assert found == []


def test_every_kind_has_a_test_backend():
    # tests/support/backends.py: the fixtures any_kind and shared_kind run every test on each of
    # these, so a kind added to symfonic_cli/kinds/ without one would go untested.
    # A server's kind registers its backend from its plugin's "<kind>_backend" fixture (markers.FIXTURES).
    from tests.support import backends, markers

    assert set(backends.KINDS) == set(kinds.KINDS) == {"sqlite", *markers.FIXTURES.values()}
