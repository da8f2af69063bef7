"""The quick route (``symfonic_cli/cli/fast.py``) gives exactly what typer gives.

``threads list`` and ``store info`` skip typer and click for a plain command line. Every
command line below runs both ways, in-process, and must give the same exit code, stdout and
stderr; the option tables of the quick route are checked against the typer commands.
"""

from __future__ import annotations

import json

import pytest

from symfonic_cli.cli import fast
from tests.support.cli import imports_of, run


@pytest.fixture
def both_routes(monkeypatch):
    """run(...) on the normal entry point, and on the typer route alone; records which ran."""
    taken: list[bool] = []
    real = fast.run

    def spy(args, environment):
        try:
            handled = real(args, environment)
        except BaseException:  # the command ran on the quick route and failed (as typer's would)
            taken.append(True)
            raise
        taken.append(handled)
        return handled

    def through_typer(*args, env=None):
        with monkeypatch.context() as m:
            m.setattr(fast, "run", lambda args, environment: False)
            return run(*args, env=env)

    def normal(*args, env=None):
        taken.clear()
        with monkeypatch.context() as m:
            m.setattr(fast, "run", spy)
            res = run(*args, env=env)
        return res, bool(taken and taken[0])

    return normal, through_typer


def _same(both_routes, *args, env=None) -> tuple[object, bool]:
    normal, through_typer = both_routes
    (res, quick) = normal(*args, env=env)
    ref = through_typer(*args, env=env)
    assert (res.code, res.out, res.err) == (ref.code, ref.out, ref.err), args
    return res, quick


def _command_lines(store: str) -> list[tuple[list[str], dict | None, bool]]:
    """(argv, env, whether the quick route should take it)."""
    s = store
    return [
        (["threads", "list", "--store", s], None, True),
        (["threads", "list", "--store", s, "--format", "json"], None, True),
        (["threads", "list", "-s", s, "-f", "JSONL", "-n", "2"], None, True),
        (["threads", "list", f"--store={s}", "--format=text", "--limit=0"], None, True),
        (["threads", "list", "--store", s, "--tenant", "acme", "--format", "json"], None, True),
        (["threads", "list", "--store", s, "--tenant", "acme", "--sub-tenant", "_", "--format", "json"], None, True),
        (["threads", "list", "--store", s, "--tenant", "acme", "--sub-tenant", "eu"], None, True),
        (["threads", "list", "--store", s, "--tenant", "nobody-here"], None, True),
        (["threads", "list", "--store", s, "--sub-tenant", "eu"], None, True),  # usage error, same line
        (["threads", "list", "--store", s, "--format", "yaml"], None, True),
        (["threads", "list", "--store", s, "--format", ""], None, True),
        (["threads", "list", "--store", ""], None, True),
        (["threads", "list"], {"SYMFONIC_STORE": s}, True),
        (["threads", "list", "--format", "json"], {"SYMFONIC_STORE": ""}, True),
        (["threads", "list", "--store", s + ".missing"], None, True),
        (["threads", "list", "--store", "redis://u:hunter2@localhost/0"], None, True),
        (["threads", "list", "--store", s], {"SYMFONIC_DEBUG": "false", "SYMFONIC_CONNECT_TIMEOUT": "5"}, True),
        (["threads", "list", "--store", s + ".missing"], {"SYMFONIC_DEBUG": "no"}, True),
        # The run-state listing: statuses, sessions, sorts, sizes and activity windows.
        (["threads", "list", "--store", s, "--status", "interrupted,error,pending", "--format", "json"], None, True),
        (["threads", "list", "--store", s, "--status", "done", "--status=pending", "-f", "jsonl"], None, True),
        (["threads", "list", "--store", s, "--status", "done,bogus"], None, True),  # usage error, same line
        (["threads", "list", "--store", s, "--status", ""], None, True),
        (["threads", "list", "--store", s, "--status", "done", "--with-size", "--sort", "size", "--reverse"], None, True),
        (["threads", "list", "--store", s, "--with-size", "--format", "json"], None, True),
        (["threads", "list", "--store", s, "--sort", "checkpoints", "-n", "2"], None, True),
        (["threads", "list", "--store", s, "--sort", "newest"], None, True),  # usage error, same line
        (["threads", "list", "--store", s, "--reverse"], None, True),
        (["threads", "list", "--store", s, "--session", "s-002", "--format", "json"], None, True),
        (["threads", "list", "--store", s, "--session", ""], None, True),  # usage error, same line
        (["threads", "list", "--store", s, "--tenant", "acme", "--status", "done", "--session", "s-001"], None, True),
        (["threads", "list", "--store", s, "--inactive-for", "1d", "--format", "json"], None, True),
        (["threads", "list", "--store", s, "--active-within", "3650d", "--status", "done"], None, True),
        (["threads", "list", "--store", s, "--inactive-since", "2000-01-01"], None, True),
        (["threads", "list", "--store", s, "--inactive-for", "90"], None, True),  # usage error, same line
        (["threads", "list", "--store", s, "--inactive-for", "1d", "--inactive-since", "2000-01-01"], None, True),
        # --since/--until: last activity inside the window (the grammar of transcript show).
        (["threads", "list", "--store", s, "--since", "2000-01-01", "--format", "json"], None, True),
        (["threads", "list", "--store", s, "--until", "2000-01-01", "--format", "json"], None, True),
        (["threads", "list", "--store", s, "--since", "3650d", "--until", "2999-12-31T08:24", "--status", "done"], None, True),
        (["threads", "list", "--store", s, "--tz", "Europe/Berlin", "--since", "2000-01-01T00:00"], None, True),
        (["threads", "list", "--store", s, "--since", "yesterday"], None, True),  # usage error, same line
        (["threads", "list", "--store", s, "--since", "1d", "--active-within", "2d"], None, True),  # usage error
        (["threads", "list", "--status", "done"], {"SYMFONIC_STORE": s}, True),
        (["store", "info", "--store", s], None, True),
        (["store", "info", "-s", s, "--format", "json"], None, True),
        (["store", "info", "--format", "jsonl"], {"SYMFONIC_STORE": s}, True),
        # --tz (a root option, after the command name too): times in table and text, UTC in JSON.
        (["threads", "list", "--store", s, "--tz", "Europe/Berlin"], None, True),
        (["threads", "list", "--store", s, "--tz", "Asia/Kolkata", "--format", "text"], None, True),
        (["threads", "list", "--store", s, "--tz=America/New_York", "--format", "json"], None, True),
        (["threads", "list", "--store", s, "--tz", "UTC", "--status", "done,pending", "--format", "text"], None, True),
        (["threads", "list", "--store", s, "--tz", "Mars/Olympus"], None, True),  # usage error, same line
        (["threads", "list", "--store", s, "--tz", "Europe/Berlin", "--inactive-since", "2999-01-01T00:00"], None, True),
        (["threads", "list", "--store", s], {"SYMFONIC_TZ": "Asia/Tokyo"}, True),
        (["threads", "list", "--store", s], {"SYMFONIC_TZ": "Nowhere/Atall"}, True),  # usage error, same line
        (["threads", "list", "--store", s, "--tz", "Asia/Tokyo"], {"SYMFONIC_TZ": "Nowhere/Atall"}, True),
        (["store", "info", "--store", s, "--tz", "Europe/Berlin"], None, True),
        (["threads", "list", "--store", s, "--tz", "Europe/Berlin", "--tz", "UTC"], None, False),
        (["--tz", "Europe/Berlin", "threads", "list", "--store", s], None, False),
        # Values are case-insensitive on both routes.
        (["threads", "list", "--store", s, "--format", "JSON", "--status", "DONE,Pending", "--sort", "Checkpoints"], None, True),
        (["store", "info", "--store", s, "-f", "Json"], None, True),
        # Left to typer: help, root options, odd values, unknown or repeated options.
        (["threads", "list", "--help"], None, False),
        (["store", "info", "--help"], None, False),
        (["threads", "list", "--store", s, "--limit", "-1"], None, False),
        (["threads", "list", "--store", s, "--limit", "x"], None, False),
        (["threads", "list", "--store", s, "--limit", "+2"], None, False),
        (["threads", "list", "--store", s, "--limit", " 2"], None, False),
        (["threads", "list", "--store", s, "--limit", "٣"], None, False),
        (["threads", "list", "--store", s, "--limit", "1" * 5000], None, False),  # beyond int()'s digit limit
        (["threads", "list", "--store", s, "--limit"], None, False),
        (["threads", "list", "--store", s, "--store", s], None, False),
        (["threads", "list", "--store", s, "--tenant", "--limit"], None, False),
        (["threads", "list", "--store", s, "-n3"], None, False),
        (["threads", "list", "--store", s, "extra"], None, False),
        (["threads", "list", "--store", s, "--thread", "acme:eu:s-002"], None, False),
        (["threads", "list", "--store", s, "--"], None, False),
        (["threads", "list", "--store", s, "--reverse", "--reverse"], None, False),
        (["threads", "list", "--store", s, "--with-size=1"], None, False),
        (["threads", "list", "--store", s, "--reverse=true"], None, False),
        (["threads", "list", "--store", s, "--sort", "size", "--sort", "checkpoints"], None, False),
        (["threads", "list", "--store", s, "--status", "--reverse"], None, False),
        (["threads", "list", "--store", s, "--status"], None, False),
        (["threads", "list", "--store", s, "--session", "-x"], None, False),
        (["threads", "lists", "--store", s], None, False),
        (["store", "info", "--store", s, "--tenant", "acme"], None, False),
        (["--connect-timeout", "5", "threads", "list", "--store", s], None, False),
        (["threads", "list", "--store", s], {"SYMFONIC_CONNECT_TIMEOUT": "0.05"}, False),
        (["threads", "list", "--store", s], {"SYMFONIC_CONNECT_TIMEOUT": "soon"}, False),
        (["threads", "list", "--store", s], {"SYMFONIC_DEBUG": "maybe"}, False),
        # libpq key/value strings: a PostgreSQL location (masked), or exit 2; never a file name.
        (["threads", "list", "--store", "host=h dbname=x user=u password=hunter2 bogus=1"], None, True),
        (["store", "info", "--store", "hots=h password='hunter2 x'"], None, True),
        (["threads", "list", "--store", "host=/nonexistent-dir port=1 dbname=x user=u password=hunter2"], None, True),
        # Numbers out of their documented range (README "Numeric options"): exit 2 naming the range.
        (["threads", "list", "--store", s, "--limit", "1000000000"], None, True),
        (["threads", "list", "--store", s, "--limit", "1000000001"], None, False),
        (["threads", "list", "--store", s, "--limit", "99999999999999999999999"], None, False),
        (["threads", "list", "--store", s, "--limit=99999999999999999999999"], None, False),
        (["threads", "list", "--store", s, "--limit", "nan"], None, False),
        (["threads", "list", "--store", s, "--limit", "inf"], None, False),
        (["store", "info", "--store", s], {"SYMFONIC_CONNECT_TIMEOUT": "3600"}, True),
        (["threads", "list", "--store", s], {"SYMFONIC_CONNECT_TIMEOUT": "3600.5"}, False),
        (["threads", "list", "--store", s], {"SYMFONIC_CONNECT_TIMEOUT": "nan"}, False),
        (["threads", "list", "--store", s], {"SYMFONIC_CONNECT_TIMEOUT": "inf"}, False),
        (["threads", "list", "--store", s], {"SYMFONIC_CONNECT_TIMEOUT": "1e400"}, False),
        (["threads", "list", "--store", s], {"SYMFONIC_CONNECT_TIMEOUT": "9" * 400}, False),
        (["--connect-timeout", "nan", "threads", "list", "--store", s], None, False),
        (["--connect-timeout", "-inf", "store", "info", "--store", s], None, False),
    ]


def test_both_routes_agree_on_every_command_line(sqlite_master, both_routes):
    for argv, env, quick_expected in _command_lines(str(sqlite_master)):
        res, quick = _same(both_routes, *argv, env=env)
        assert quick is quick_expected, (argv, env)
        assert "Traceback" not in res.err
        assert "hunter2" not in res.out + res.err


def _search_lines(store: str) -> list[tuple[list[str], dict | None, bool]]:
    """threads search: (argv, env, whether the quick route should take it)."""
    s = store
    search = ["threads", "search"]
    return [
        ([*search, "--store", s, "order 1042"], None, True),
        ([*search, "order 1042", "--store", s, "--format", "json"], None, True),
        ([*search, "-s", s, "ORDER", "-f", "jsonl", "-n", "1"], None, True),
        ([*search, f"--store={s}", "--format=text", "--limit=0", "order"], None, True),
        ([*search, "-s", s, "-f", "csv", "1042"], None, True),
        ([*search, "-s", s, "Order 1042", "--case-sensitive", "-f", "json"], None, True),
        ([*search, "-s", s, "order", "--tools", "-f", "json"], None, True),
        ([*search, "-s", s, "order", "--tenant", "acme", "--sub-tenant", "_", "-f", "json"], None, True),
        ([*search, "-s", s, "order", "--session", "s-001", "-f", "json"], None, True),
        ([*search, "-s", s, "order", "--active-within", "3650d", "-f", "json"], None, True),
        ([*search, "-s", s, "order", "--inactive-for", "1d", "-f", "json"], None, True),
        ([*search, "-s", s, "order", "--inactive-since", "2000-01-01", "--tz", "Europe/Berlin"], None, True),
        (["threads", "search", "order", "-f", "json"], {"SYMFONIC_STORE": s}, True),
        ([*search, "-s", s, "zzz-not-there", "-f", "json"], None, True),
        # Bad input: the same line and exit code on both routes.
        ([*search, "-s", s, ""], None, True),  # the text is empty
        ([*search, "-s", s, "order", "--sub-tenant", "eu"], None, True),  # needs --tenant
        ([*search, "-s", s, "order", "--session", ""], None, True),
        ([*search, "-s", s, "order", "--format", "yaml"], None, True),
        ([*search, "-s", s, "order", "--inactive-for", "90"], None, True),
        ([*search, "-s", s, "order", "--inactive-for", "1d", "--active-within", "2d"], None, True),
        ([*search, "-s", s + ".missing", "order"], None, True),
        ([*search, "-s", "redis://u:hunter2@localhost/0", "order"], None, True),
        ([*search, "order"], {"SYMFONIC_STORE": ""}, True),
        ([*search, "-s", s, "order", "--tz", "Mars/Olympus"], None, True),
        # Left to typer: help, no text or two, a dash-leading text, odd or repeated options.
        ([*search, "--help"], None, False),
        ([*search, "-s", s], None, False),
        ([*search, "-s", s, "order", "1042"], None, False),
        ([*search, "-s", s, "-order"], None, False),
        ([*search, "-s", s, "--", "-order"], None, False),
        ([*search, "-s", s, "order", "--limit", "-1"], None, False),
        ([*search, "-s", s, "order", "--limit", "x"], None, False),
        ([*search, "-s", s, "order", "--limit", "1000000001"], None, False),
        ([*search, "-s", s, "order", "--tools", "--tools"], None, False),
        ([*search, "-s", s, "order", "--tools=1"], None, False),
        ([*search, "-s", s, "order", "--status", "done"], None, False),
        ([*search, "-s", s, "--store", s, "order"], None, False),
        ([*search, "-s", s, "order", "--limit"], None, False),
        (["--tz", "UTC", *search, "-s", s, "order"], None, False),
    ]


def test_both_routes_agree_on_threads_search(sqlite_master, both_routes):
    """threads search on the quick route: the same stdout, stderr and exit code as typer's, for
    its options and its bad input; what the quick route leaves to typer is typer's alone."""
    found = 0
    for argv, env, quick_expected in _search_lines(str(sqlite_master)):
        res, quick = _same(both_routes, *argv, env=env)
        assert quick is quick_expected, (argv, env)
        assert "Traceback" not in res.err and "hunter2" not in res.out + res.err
        assert res.code in (0, 2, 4), (argv, res.code, res.err)
        found += res.code == 0 and "order 1042" in res.out
    assert found >= 5  # the lines above do find the text, on both routes


def _compat_lines(store: str) -> list[tuple[list[str], dict | None, bool]]:
    """compat report: (argv, env, whether the quick route should take it)."""
    s = store
    report = ["compat", "report"]
    return [
        ([*report, "--store", s], None, True),
        ([*report, "-s", s, "-f", "json"], None, True),
        ([*report, f"--store={s}", "--format=jsonl", "--fail-on="], None, True),
        ([*report, "-s", s, "-f", "text", "--grace", "2h"], None, True),
        ([*report, "-s", s, "--by-thread", "-f", "json"], None, True),
        ([*report, "-s", s, "--by-thread", "--format", "text", "--fail-on", "legacy"], None, True),  # exit 5
        ([*report, "-s", s, "--fail-on", "legacy,corrupt"], None, True),  # exit 5, naming where to look
        ([*report, "-s", s, "--grace", "90", "-f", "json"], None, True),  # a bare number: minutes
        ([*report, "-s", s, "--envelope-key", "provenance", "-f", "json"], None, True),
        ([*report, "-s", s, "-f", "json"], {"SYMFONIC_ENVELOPE_KEY": "provenance"}, True),
        ([*report, "-s", s, "-f", "json"], {"SYMFONIC_ENVELOPE_KEY": ""}, True),
        ([*report, "-f", "json"], {"SYMFONIC_STORE": s}, True),
        # Bad input: the same line and exit code on both routes.
        ([*report, "-s", s, "--grace", "soon"], None, True),
        ([*report, "-s", s, "--grace", ""], None, True),
        ([*report, "-s", s, "--fail-on", "bogus"], None, True),
        ([*report, "-s", s, "--envelope-key", ""], None, True),
        ([*report, "-s", s, "--format", "csv"], None, True),
        ([*report, "-s", s + ".missing"], None, True),
        ([*report, "-s", "redis://u:hunter2@localhost/0"], None, True),
        ([*report], {"SYMFONIC_STORE": ""}, True),
        ([*report, "-s", s, "--tz", "Mars/Olympus"], None, True),
        # Left to typer: help, the thread options and KEY, --current-format, odd or repeated options.
        ([*report, "--help"], None, False),
        ([*report, "-s", s, "--thread", "acme:_:s-001", "-f", "json"], None, False),
        ([*report, "-s", s, "-t", "acme:_:s-001", "--by-thread"], None, False),
        ([*report, "acme:_:s-001", "-s", s, "-f", "json"], None, False),
        ([*report, "-s", s, "--tenant", "acme", "--session", "s-001", "-f", "json"], None, False),
        ([*report, "-s", s, "--current-format", "2", "-f", "json"], None, False),
        ([*report, "-s", s, "--by-thread", "--by-thread"], None, False),
        ([*report, "-s", s, "--by-thread=1"], None, False),
        ([*report, "-s", s, "--grace", "1h", "--grace", "2h"], None, False),
        ([*report, "-s", s, "--grace", "-1h"], None, False),
    ]


def test_both_routes_agree_on_compat_report(sqlite_master, both_routes):
    """compat report on the quick route: the same stdout, stderr and exit code as typer's (the
    report, the exit-5 line naming the findings, usage errors), and typer's alone for the rest."""
    codes = set()
    for argv, env, quick_expected in _compat_lines(str(sqlite_master)):
        res, quick = _same(both_routes, *argv, env=env)
        assert quick is quick_expected, (argv, env)
        assert "Traceback" not in res.err and "hunter2" not in res.out + res.err
        codes.add(res.code)
    assert codes == {0, 2, 4, 5}


def test_quick_route_refuses_completion_requests(monkeypatch):
    monkeypatch.setenv("_SYMFONIC_COMPLETE", "bash_complete")
    assert fast.parse(["threads", "list", "--store", "x.db"]) is None


def test_routes_agree_on_every_store_kind(any_kind, both_routes):
    url = any_kind.new_store()
    res, quick = _same(both_routes, "threads", "list", "--store", url, "--format", "json")
    assert quick and res.code == 0 and '"acme:eu:s-002"' in res.out
    res, quick = _same(both_routes, "threads", "list", "--store", url, "--tenant", "acme", "--limit", "1", "--format", "jsonl")
    assert quick and res.code == 0 and len(res.out.splitlines()) == 1
    normal, through_typer = both_routes
    info, quick = normal("store", "info", "--store", url, "--format", "json")
    ref = through_typer("store", "info", "--store", url, "--format", "json")
    assert quick and info.code == ref.code == 0
    # Sizes may move between two reads of a server; the keys and counts may not.
    import json

    a, b = json.loads(info.out), json.loads(ref.out)
    assert list(a) == list(b)
    assert {k: a[k] for k in ("kind", "location", "threads", "checkpoints", "writes")} == {
        k: b[k] for k in ("kind", "location", "threads", "checkpoints", "writes")
    }


def _typer_params(words: tuple[str, str]):
    from typer.main import get_command

    from symfonic_cli.cli.root import build_app

    group = get_command(build_app(words[0])).commands[words[0]]
    return [p for p in group.commands[words[1]].params if p.name != "help"]


def test_option_tables_match_the_typer_commands():
    import click

    for words, table in fast.ROUTES.items():
        params = _typer_params(words)
        # The positional argument (threads search's text): one, required, a string, by the same name.
        # Another argument (compat report's optional KEY) is typer's: the quick route takes no positional there.
        arguments = [p for p in params if isinstance(p, click.Argument)]
        if words in fast.ARGUMENTS:
            assert [p.name for p in arguments] == [fast.ARGUMENTS[words]], words
            assert arguments[0].required and arguments[0].nargs == 1 and isinstance(arguments[0].type, click.types.StringParamType)
        else:
            assert all(not p.required for p in arguments), words
            assert fast.parse([*words, "a-key"]) is None
        params = [p for p in params if not isinstance(p, click.Argument)]
        spellings = {opt: p.name for p in params for opt in (*p.opts, *p.secondary_opts)}
        typer_only = fast.TYPER_ONLY.get(words, {})
        flags = fast.FLAGS.get(words, {})
        assert spellings == {**table, **flags, **typer_only}, words
        for p in params:
            if p.name in typer_only.values():
                continue
            if p.name in flags.values():
                assert p.is_flag and not p.secondary_opts and p.default is False, (words, p.name)
                continue
            assert not p.is_flag and p.nargs == 1 and p.multiple == (p.name in fast.MULTI_PARAMS), (words, p.name)
            is_int = isinstance(p.type, click.types.IntParamType)
            assert is_int == (p.name in fast.INT_PARAMS), (words, p.name)
            if is_int:
                assert getattr(p.type, "min", None) == 0 and getattr(p.type, "max", None) == fast.MAX_COUNT
            else:
                assert isinstance(p.type, click.types.StringParamType), (words, p.name)
            assert (p.envvar or None) == fast.ENV_PARAMS.get(p.name), (words, p.name)


def test_root_environment_matches_the_typer_root():
    from typer.main import get_command

    from symfonic_cli.cli.root import build_app

    root = {p.name: p for p in get_command(build_app("threads")).params}
    for name, env in fast.ROOT_ENV.items():
        assert root[name].envvar == env and root[name].default is None
    timeout = root["connect_timeout"]
    assert timeout.envvar == fast.CONNECT_TIMEOUT_ENV
    assert timeout.default == fast.DEFAULT_CONNECT_TIMEOUT and timeout.type.min == fast.MIN_CONNECT_TIMEOUT
    assert timeout.type.max == fast.MAX_CONNECT_TIMEOUT
    assert root["debug"].envvar == "SYMFONIC_DEBUG"
    # Every root option read from the environment is known to the quick route.
    with_env = {n for n, p in root.items() if p.envvar}
    assert with_env == {*fast.ROOT_ENV, "connect_timeout", "debug", "tz", "aes_key_file"}
    assert root["aes_key_file"].envvar == fast.AES_KEY_FILE_ENV and root["aes_key_file"].default is None
    assert root["tz"].envvar == fast.TZ_ENV and root["tz"].default is None
    # The root options the quick route takes after the command name are root options.
    for spelling, name in fast.ROOT_AFTER.items():
        assert spelling in root[name].opts


def test_quick_route_imports_neither_typer_nor_click(sqlite_master):
    """Nor typing, dataclasses or rich: each costs milliseconds on a command that takes tens."""
    out, loaded, code = imports_of(["threads", "list", "--store", str(sqlite_master), "--format", "json"],
                                   ("typer", "click", "rich", "typing", "dataclasses", "langgraph"))
    assert (loaded, code) == ([], 0), out[-300:]


def test_run_state_listing_skips_typer_too(sqlite_master):
    """``--status``/``--with-size``/``--sort``/``--reverse`` and an activity window: neither typer,
    click nor langgraph is loaded (the statuses come from the stored bytes alone)."""
    out, loaded, code = imports_of(["threads", "list", "--store", str(sqlite_master), "--status", "interrupted,error,pending,done",
                                    "--with-size", "--sort", "size", "--reverse", "--active-within", "36500d", "--format", "json"],
                                   ("typer", "click", "rich", "langgraph"))
    assert (loaded, code) == ([], 0), out[-300:]
    records = json.loads(out)
    assert records and all(r["status"] in ("interrupted", "error", "pending", "done") and r["size_bytes"] > 0 for r in records)


def test_search_on_the_quick_route_loads_neither_typer_nor_click(sqlite_master):
    """threads search skips typer and click (about 50 ms of imports, more than its search costs)."""
    out, loaded, code = imports_of(["threads", "search", "--store", str(sqlite_master), "order 1042", "--format", "json"],
                                   ("typer", "click", "rich"))
    assert (loaded, code) == ([], 0), out[-300:]
    assert any(h["snippet"] == "What is the status of order 1042?" for h in json.loads(out))
