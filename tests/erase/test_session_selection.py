"""One person across sub-tenants (issue #25): thread export and thread erase with --tenant T
--session S (S under every sub-tenant of T) and --session S alone (under every tenant), on every
store kind; the plan lists every match before anything happens, exactly as a key file would."""

from __future__ import annotations

import json

import pytest

from tests.support.cli import run
from tests.support.scenarios import write_greetings

KEYS = ["acme:eu:p-7", "acme:us:p-7", "acme:_:p-7", "globex:_:p-7", "acme:eu:p-77", "acme2:_:p-7", "acme:eu:q-7", "legacy-p-7"]
ACME_P7 = ["acme:_:p-7", "acme:eu:p-7", "acme:us:p-7"]
EVERY_P7 = ["acme2:_:p-7", "acme:_:p-7", "acme:eu:p-7", "acme:us:p-7", "globex:_:p-7"]


@pytest.fixture
def store(any_kind):
    return write_greetings(any_kind, KEYS)


def _plan(url, *selection):
    r = run("thread", "erase", "-s", url, *selection, "--dry-run", "-f", "json")
    assert r.code == 0, r.err
    return json.loads(r.out)


def test_erase_plans_list_every_match_as_a_key_file_would(store, tmp_path):
    for selection, expected in ((("--tenant", "acme", "--session", "p-7"), ACME_P7), (("--session", "p-7"), EVERY_P7)):
        plan = _plan(store, *selection)
        assert sorted(t["key"] for t in plan["threads"]) == sorted(expected)
        key_file = tmp_path / "keys.txt"
        key_file.write_text("".join(k + "\n" for k in expected))
        by_file = _plan(store, "--from-file", str(key_file))
        assert plan["threads"] == by_file["threads"] and plan["summary"] == by_file["summary"]
    # With --sub-tenant it is the one key, as before.
    assert [t["key"] for t in _plan(store, "--tenant", "acme", "--sub-tenant", "eu", "--session", "p-7")["threads"]] == ["acme:eu:p-7"]
    # The text plan names each thread before anything is deleted.
    text = run("thread", "erase", "-s", store, "--tenant", "acme", "--session", "p-7", "--dry-run")
    assert text.code == 0 and all(k in text.out for k in ACME_P7) and "acme:eu:p-77" not in text.out


def test_erase_removes_exactly_the_session_under_every_sub_tenant(store):
    r = run("thread", "erase", "-s", store, "--tenant", "acme", "--session", "p-7", "--yes", "-f", "json")
    assert r.code == 0, r.err
    left = sorted(t["key"] for t in json.loads(run("threads", "list", "-s", store, "-f", "json").out))
    assert left == sorted(set(KEYS) - set(ACME_P7))


def test_export_takes_the_session_across_tenants(store, tmp_path):
    out = tmp_path / "bundle"
    r = run("thread", "export", "-s", store, "--session", "p-7", "-o", str(out), "-f", "json")
    assert r.code == 0, r.err
    manifest = json.loads((out / "manifest.json").read_text())
    assert sorted(t["key"] for t in manifest["threads"]) == sorted(EVERY_P7)
    out2 = tmp_path / "acme"
    r = run("thread", "export", "-s", store, "--tenant", "acme", "--session", "p-7", "-o", str(out2), "-f", "json")
    assert r.code == 0, r.err
    assert sorted(t["key"] for t in json.loads((out2 / "manifest.json").read_text())["threads"]) == ACME_P7


def test_a_session_matching_nothing_is_not_found(store, tmp_path):
    r = run("thread", "erase", "-s", store, "--tenant", "acme", "--session", "nobody", "--dry-run")
    assert r.code == 3 and "acme:_:nobody" in r.err  # the key without a sub-tenant is what is missing
    r = run("thread", "erase", "-s", store, "--session", "nobody", "--dry-run")
    assert r.code == 3 and "no thread of session 'nobody'" in r.err
    r = run("thread", "export", "-s", store, "--session", "nobody", "-o", str(tmp_path / "x"))
    assert r.code == 3 and not (tmp_path / "x").exists()
    r = run("thread", "erase", "-s", store, "--session", "", "--dry-run")
    assert r.code == 2


def test_a_repeated_thread_option_selects_every_key_or_is_refused(store, tmp_path):
    """``-t A -t B`` once planned B alone (the last option won): erase, export and prune take every
    key given, in order and each once, exactly as a key file; a command of one thread refuses it."""
    two = ["acme:us:p-7", "acme:eu:p-7"]
    plan = _plan(store, "-t", two[0], "--thread", two[1], "-t", two[0])
    assert [t["key"] for t in plan["threads"]] == two
    key_file = tmp_path / "keys.txt"
    key_file.write_text("".join(k + "\n" for k in two))
    assert plan["threads"] == _plan(store, "--from-file", str(key_file))["threads"]
    pruned = json.loads(run("thread", "prune", "-s", store, "-t", two[0], "-t", two[1], "--dry-run", "-f", "json").out)
    assert [t["key"] for t in pruned["threads"]] == two
    out = tmp_path / "bundle"
    assert run("thread", "export", "-s", store, "-t", two[0], "-t", two[1], "-o", str(out)).code == 0
    assert sorted(t["key"] for t in json.loads((out / "manifest.json").read_text())["threads"]) == sorted(two)
    for words in (("transcript", "show"), ("thread", "show"), ("thread", "history"), ("compat", "show")):
        r = run(*words, "-s", store, "-t", two[0], "-t", two[1])
        assert r.code == 2 and "--thread given 2 times" in r.err, (words, r.err)
    r = run("thread", "erase", "-s", store, "-t", two[0], "-t", two[1], "--tenant", "acme", "--dry-run")
    assert r.code == 2 and "several --thread go alone" in r.err
    erased = run("thread", "erase", "-s", store, "-t", two[0], "-t", two[1], "--yes", "-f", "json")
    assert erased.code == 0, erased.err
    left = {t["key"] for t in json.loads(run("threads", "list", "-s", store, "-f", "json").out)}
    assert left == set(KEYS) - set(two)
