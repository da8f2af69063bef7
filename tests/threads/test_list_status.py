"""``threads list --status/--session/--sort/--reverse/--with-size`` on every store kind.

The stores are the run-state threads of tests/thread/test_thread_show.py (real graphs, SIGKILLed runs
included); each thread's expected status is checked there against the graph's own ``get_state``.
"""

from __future__ import annotations

import json

import pytest

from tests.support import run_state_scenarios as rs
from tests.support.cli import run
from tests.thread.test_thread_show import KINDS, _show, state_stores  # noqa: F401 - fixture


@pytest.mark.parametrize("kind", KINDS)
def test_status_lists_exactly_the_threads_in_that_state(kind, state_stores):  # noqa: F811 - the fixture imported above
    _, url, graphs = state_stores(kind)
    for status in ("interrupted", "error", "pending", "done"):
        r = run("threads", "list", "-s", url, "--status", status, "-f", "json")
        assert r.code == 0, r.err
        got = {row["key"]: row["status"] for row in json.loads(r.out)}
        assert set(got) == {k for k, s in rs.EXPECTED_STATUS.items() if s == status}, (kind, status)
    both = run("threads", "list", "-s", url, "--status", "interrupted,error", "--status", "pending", "-f", "json")
    assert {row["key"] for row in json.loads(both.out)} == {k for k, s in rs.EXPECTED_STATUS.items() if s != "done"}


@pytest.mark.parametrize("kind", KINDS)
def test_with_size_sort_and_session(kind, state_stores):  # noqa: F811 - the fixture imported above
    _, url, _ = state_stores(kind)
    rows = json.loads(run("threads", "list", "-s", url, "--with-size", "--sort", "size", "-f", "json").out)
    sizes = [r["size_bytes"] for r in rows]
    assert sizes == sorted(sizes, reverse=True) and all(s > 0 for s in sizes)
    for r in rows:
        assert r["size_bytes"] == _show(url, r["key"])["size_bytes"]
    rev = json.loads(run("threads", "list", "-s", url, "--sort", "checkpoints", "--reverse", "-f", "json").out)
    counts = [r["checkpoints"] for r in rev]
    assert counts == sorted(counts)
    first = json.loads(run("threads", "list", "-s", url, "--sort", "first-activity", "-f", "json").out)
    assert [r["first_activity"] for r in first] == sorted((r["first_activity"] for r in first), reverse=True)
    sess = json.loads(run("threads", "list", "-s", url, "--session", "react-2", "-f", "json").out)
    assert [r["key"] for r in sess] == ["globex:_:react-2"]


def test_tail_reader_never_trusts_a_look_alike():
    """Bytes around the ``channel_versions`` key (generated, fixed seed): a dict only when the
    fields end the blob exactly."""
    import random

    rnd = random.Random(14)
    for _ in range(500):
        _check_tail(rnd.randbytes(rnd.randrange(200)), rnd.randbytes(rnd.randrange(60)))


def _check_tail(junk: bytes, extra: bytes) -> None:
    import ormsgpack

    from symfonic_cli.codec.msgpack_head import parse_tail

    real = ormsgpack.packb({"channel_versions": {"a": "1"}, "versions_seen": {}, "updated_channels": ["a"]})[1:]
    head = b"\x87\xa1v\x04"
    for tail in (b"\xb0channel_versions" + junk, real + extra, real[: len(real) // 2] + junk):
        got = parse_tail(head, tail, len(tail) + 100)
        assert got is None or isinstance(got["channel_versions"], dict)
    assert parse_tail(head, real, len(real) + 100) == {"channel_versions": {"a": "1"}, "versions_seen": {}, "updated_channels": ["a"]}
    if extra:
        assert parse_tail(head, real + extra, len(real) + len(extra) + 100) is None
