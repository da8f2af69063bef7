"""One selection resolver (selection.choose) for every changing command and API function: each
selection form selects the same threads in thread erase, thread prune and thread export, on the
command line and through symfonic_cli.api alike, and the API's document equals the command's JSON,
on every store kind. (thread prune --tenant T --session S once selected nothing, and the API's
erase/export/prune with tenant=, session= too.)"""

from __future__ import annotations

import json

import pytest

from tests.support.cli import run
from tests.support.scenarios import write_greetings

KEYS = ["acme:eu:p-7", "acme:us:p-7", "acme:_:p-7", "globex:_:p-7", "acme:eu:p-77", "acme2:_:p-7", "acme:eu:q-7", "legacy-p-7"]
ACME = ["acme:_:p-7", "acme:eu:p-7", "acme:eu:p-77", "acme:eu:q-7", "acme:us:p-7"]
FILE_KEYS = ["globex:_:p-7", "legacy-p-7"]

# (name, command-line options, API arguments, the threads selected)
FORMS = [
    ("thread", ["--thread", "acme:eu:p-7"], {"thread": "acme:eu:p-7"}, ["acme:eu:p-7"]),
    ("threads", ["-t", "acme:us:p-7", "-t", "acme:eu:p-7"], {"thread": ["acme:us:p-7", "acme:eu:p-7"]}, ["acme:eu:p-7", "acme:us:p-7"]),
    ("tenant, sub-tenant, session", ["--tenant", "acme", "--sub-tenant", "eu", "--session", "p-7"],
     {"tenant": "acme", "sub_tenant": "eu", "session": "p-7"}, ["acme:eu:p-7"]),
    ("tenant, session", ["--tenant", "acme", "--session", "p-7"], {"tenant": "acme", "session": "p-7"},
     ["acme:_:p-7", "acme:eu:p-7", "acme:us:p-7"]),
    ("session", ["--session", "p-7"], {"session": "p-7"}, ["acme2:_:p-7", "acme:_:p-7", "acme:eu:p-7", "acme:us:p-7", "globex:_:p-7"]),
    ("all sessions", ["--tenant", "acme", "--all-sessions"], {"tenant": "acme", "all_sessions": True}, ACME),
    ("sub-tenant's sessions", ["--tenant", "acme", "--sub-tenant", "eu", "--all-sessions"],
     {"tenant": "acme", "sub_tenant": "eu", "all_sessions": True}, ["acme:eu:p-7", "acme:eu:p-77", "acme:eu:q-7"]),
    ("key file", ["--from-file", "KEYFILE"], {"from_file": "KEYFILE"}, FILE_KEYS),
    ("retention", ["--tenant", "acme", "--inactive-since", "2099-01-01"], {"tenant": "acme", "inactive_since": "2099-01-01"}, ACME),
]
PRUNE_ONLY = [("every thread", ["--all"], {"all_threads": True}, KEYS)]


@pytest.fixture
def store(any_kind):
    return write_greetings(any_kind, KEYS)


def _forms(tmp_path, forms):
    key_file = tmp_path / "keys.txt"
    key_file.write_text("".join(k + "\n" for k in FILE_KEYS))
    for name, options, arguments, expected in forms:
        options = [str(key_file) if o == "KEYFILE" else o for o in options]
        arguments = {k: str(key_file) if v == "KEYFILE" else v for k, v in arguments.items()}
        yield name, options, arguments, sorted(expected)


def _listing(url) -> list:
    r = run("threads", "list", "-s", url, "-f", "json")
    assert r.code == 0, r.err
    return json.loads(r.out)


@pytest.mark.parametrize("command", ["erase", "prune"])
def test_every_form_plans_the_same_threads_on_the_command_line_and_in_the_api(store, tmp_path, command):
    from symfonic_cli import api

    before = _listing(store)
    for name, options, arguments, expected in _forms(tmp_path, FORMS + (PRUNE_ONLY if command == "prune" else [])):
        r = run("thread", command, "-s", store, *options, "--dry-run", "-f", "json")
        assert r.code == 0, (name, r.err)
        printed = json.loads(r.out)
        assert sorted(t["key"] for t in printed["threads"]) == expected, name
        returned = getattr(api, command)(store, dry_run=True, **arguments)
        assert returned == printed, name
    assert _listing(store) == before  # dry runs


def test_every_form_exports_the_same_threads_on_the_command_line_and_in_the_api(store, tmp_path):
    from symfonic_cli import api

    for i, (name, options, arguments, expected) in enumerate(_forms(tmp_path, FORMS)):
        by_cli, by_api = tmp_path / f"cli{i}", tmp_path / f"api{i}"
        r = run("thread", "export", "-s", store, *options, "-o", str(by_cli), "-f", "json")
        assert r.code == 0, (name, r.err)
        printed = json.loads(r.out)
        returned = api.export(store, str(by_api), **arguments)
        assert {**returned, "output": None} == {**printed, "output": None}, name
        for bundle in (by_cli, by_api):
            manifest = json.loads((bundle / "manifest.json").read_text())
            assert sorted(t["key"] for t in manifest["threads"]) == expected, (name, bundle)
        assert sorted(p.name for p in (by_cli / "transcript").iterdir()) == sorted(p.name for p in (by_api / "transcript").iterdir())


def test_a_session_selection_prunes_and_erases_exactly_its_threads(store):
    # Through the API, as a person would call it: the session of one person under every sub-tenant.
    from symfonic_cli import api

    pruned = api.prune(store, tenant="acme", session="p-7", yes=True)
    assert sorted(t["key"] for t in pruned["threads"]) == ["acme:_:p-7", "acme:eu:p-7", "acme:us:p-7"]
    assert {t["status"] for t in pruned["threads"]} == {"pruned"}
    erased = api.erase(store, session="p-7", yes=True)
    assert sorted(t["key"] for t in erased["threads"]) == ["acme2:_:p-7", "acme:_:p-7", "acme:eu:p-7", "acme:us:p-7", "globex:_:p-7"]
    assert sorted(t["key"] for t in _listing(store)) == ["acme:eu:p-77", "acme:eu:q-7", "legacy-p-7"]


def test_a_session_matching_nothing_is_not_found_everywhere(store, tmp_path):
    from symfonic_cli import api
    from symfonic_cli.errors import NotFoundError

    for command in ("erase", "prune"):
        r = run("thread", command, "-s", store, "--session", "nobody", "--dry-run")
        assert r.code == 3 and "no thread of session 'nobody'" in r.err, (command, r.err)
        with pytest.raises(NotFoundError, match="no thread of session 'nobody'"):
            getattr(api, command)(store, session="nobody", dry_run=True)
        r = run("thread", command, "-s", store, "--tenant", "acme", "--session", "nobody", "--dry-run")
        assert r.code == 3 and "acme:_:nobody" in r.err, (command, r.err)
        with pytest.raises(NotFoundError, match="acme:_:nobody"):
            getattr(api, command)(store, tenant="acme", session="nobody", dry_run=True)
    with pytest.raises(NotFoundError):
        api.export(store, str(tmp_path / "x"), session="nobody")
    assert not (tmp_path / "x").exists()
