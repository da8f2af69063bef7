"""The one thread-selection builder (symfonic_cli/selection.py), without a command line around it."""

from __future__ import annotations

import io

import pytest

from symfonic_cli.environment import Environment
from symfonic_cli.errors import EXIT_USAGE, UsageError
from symfonic_cli.selection import ERASE, MIGRATE, ONE, build_selection, one_thread
from symfonic_cli.threadkey import derive_key, tenant_prefix


def test_one_thread_is_the_key_exactly():
    assert one_thread(" a:b ", None, None, None) == " a:b "  # never trimmed
    assert one_thread(None, "acme", None, "s-1") == derive_key("acme", None, "s-1")


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"threads": "k", "tenant": "acme"}, "give either --thread or --tenant/--sub-tenant/--session, not both"),
        ({"threads": ""}, "--thread is empty"),
        ({"tenant": "acme"}, "which thread?"),
        ({"tenant": "", "session": "s"}, "--tenant and --session must not be empty"),
    ],
)
def test_one_thread_usage_errors(kw, message):
    with pytest.raises(UsageError) as err:
        build_selection(ONE, **kw)
    assert err.value.message == message and err.value.exit_code == EXIT_USAGE


def test_erase_selections_and_their_receipts():
    one = build_selection(ERASE, threads="t:_:1")
    assert one.keys == ("t:_:1",) and one.receipt == {"thread": "t:_:1"} and one.inactive_before is None
    tenant = build_selection(ERASE, tenant="acme", sub_tenant="eu", all_sessions=True)
    assert tenant.keys is None and tenant.prefix == tenant_prefix("acme", "eu")
    assert tenant.receipt == {"tenant": "acme", "sub_tenant": "eu", "all_sessions": True}
    env = Environment(stdin=io.StringIO("b\na\nb\n"))
    batch = build_selection(ERASE, from_file="-", environment=env)
    assert batch.from_stdin and batch.receipt == {"from_file": "-", "threads": len(batch.keys)} and "a" in batch.keys


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"all_sessions": True, "tenant": "acme", "session": "s"}, "--all-sessions goes with --tenant [--sub-tenant] only"),
        ({"all_sessions": True}, "--all-sessions needs --tenant"),
        ({"from_file": "x", "tenant": "acme"}, "--from-file goes alone, without --thread/--tenant/--session"),
    ],
)
def test_erase_usage_errors(kw, message):
    with pytest.raises(UsageError) as err:
        build_selection(ERASE, **kw)
    assert err.value.message == message


def test_migrate_selections():
    assert build_selection(MIGRATE, threads=["b", "a", "b"]).keys == ("b", "a")
    assert build_selection(MIGRATE, tenant="acme", session="s").keys == (derive_key("acme", None, "s"),)
    whole = build_selection(MIGRATE, tenant="acme")
    assert whole.keys is None and whole.tenant == "acme" and not whole.every_thread
    assert build_selection(MIGRATE, all_threads=True).every_thread
    for kw, message in (
        ({}, "choose the threads with exactly one of --thread, --tenant, --from-file, --all"),
        ({"threads": ["a"], "all_threads": True}, "choose the threads with exactly one of --thread, --tenant, --from-file, --all"),
        ({"threads": ["a"], "session": "s"}, "--sub-tenant and --session need --tenant"),
        ({"threads": ["a", ""]}, "an empty thread key was given"),
    ):
        with pytest.raises(UsageError) as err:
            build_selection(MIGRATE, **kw)
        assert err.value.message == message, kw
