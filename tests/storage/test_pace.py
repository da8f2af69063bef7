"""--pause and --max-rate (issue #38 item 3): a pace between the threads' transactions, read from the
receipt file's per-thread times (each line is written as its thread commits), on every store kind."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from tests.conftest import backend_for
from tests.support.backends import KINDS
from tests.support.cli import run


def _gaps(receipt) -> list[float]:
    times = [datetime.fromisoformat(r["time"].replace("Z", "+00:00"))
             for r in map(json.loads, receipt.read_text().splitlines()) if r["record"] == "thread"]
    return [(b - a).total_seconds() for a, b in zip(times, times[1:])]


@pytest.mark.parametrize("kind", KINDS)
def test_pause_between_transactions(kind, request, tmp_path):
    backend = backend_for(kind, request)
    url = backend.new_store()
    receipt = tmp_path / "r.jsonl"
    res = run("thread", "prune", "-s", url, "--all", "--yes", "-f", "json", "--receipt", str(receipt), "--pause", "250ms")
    assert res.code == 0, res.err
    gaps = _gaps(receipt)
    assert len(gaps) >= 5 and min(gaps) >= 0.24, gaps


@pytest.mark.parametrize("kind", KINDS)
def test_max_rate(kind, request, tmp_path):
    backend = backend_for(kind, request)
    url = backend.new_store()
    receipt = tmp_path / "r.jsonl"
    res = run("thread", "erase", "-s", url, "--tenant", "acme", "--all-sessions", "--yes", "-f", "json",
              "--receipt", str(receipt), "--max-rate", "4")
    assert res.code == 0, res.err
    times = [datetime.fromisoformat(r["time"].replace("Z", "+00:00"))
             for r in map(json.loads, receipt.read_text().splitlines()) if r["record"] == "thread"]
    n = len(times)
    assert n >= 3
    # thread k starts no sooner than (k - 1) / 4 s after the first: the last one at least (n - 1) / 4 s later
    assert (times[-1] - times[0]).total_seconds() >= (n - 1) / 4 - 0.26, times


@pytest.mark.parametrize("args", [("--pause", "soon"), ("--pause", "2h"), ("--pause", "-5ms"), ("--max-rate", "0"),
                                  ("--max-rate", "-1"), ("--max-rate", "nan"), ("--max-rate", "fast")])
def test_bad_pace_is_a_usage_error(args, tmp_path):
    for command in ("erase", "prune"):
        res = run("thread", command, "-s", str(tmp_path / "none.db"), "-t", "a:_:b", "--yes", *args)
        assert res.code == 2, (command, args, res.err)
        assert args[0] in res.err and "Traceback" not in res.err


@pytest.mark.parametrize("kw", [{"pause": 5}, {"pause": "later"}, {"max_rate": 0}, {"max_rate": "4"}, {"max_rate": True}])
def test_api_checks_the_pace(kw, tmp_path):
    from symfonic_cli import api
    from symfonic_cli.errors import UsageError

    for fn in (api.erase, api.prune):
        with pytest.raises(UsageError, match=next(iter(kw))):
            fn(str(tmp_path / "none.db"), thread="a:_:b", yes=True, **kw)
