"""A prune that committed is never reported as left as it was (issue 33 item 4), on SQLite and
MongoDB, which verify after the commit: the run stops itself right after the thread's commit
(``SYMFONIC_FAULT_STOP_AFTER_COMMIT``, changes/faults.py), the real graph writes the thread as the
application would, and the run continues. The thread is recorded ``failed``: committed, its rows
deleted, then written again, exit 8 as erase's. (PostgreSQL verifies inside the transaction.)"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from tests.conftest import backend_for

KEY = "acme:_:s-001"


def _ids(backend, url: str) -> set[str]:
    with backend.saver(url) as saver:
        return {t.config["configurable"]["checkpoint_id"] for t in saver.list({"configurable": {"thread_id": KEY}})}


@pytest.mark.parametrize("kind", ["sqlite", "mongodb"])
def test_a_thread_written_after_the_commit_is_recorded_committed(kind, request):
    from langchain_core.messages import HumanMessage

    from tests.support.scenarios import agent_graph

    backend = backend_for(kind, request)
    url = backend.new_store()
    before = _ids(backend, url)
    assert len(before) > 2
    env = {**os.environ, "SYMFONIC_FAULT_STOP_AFTER_COMMIT": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "symfonic_cli", "thread", "prune", "-s", url, "-t", KEY, "--yes", "-f", "json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        _, status = os.waitpid(proc.pid, os.WUNTRACED)
        assert os.WIFSTOPPED(status), status
        committed = _ids(backend, url)
        assert committed == {max(before)}  # the prune has committed: only the latest is left
        with backend.saver(url) as saver:  # the application writes the thread now
            agent_graph().compile(checkpointer=saver).invoke({"messages": [HumanMessage(content="one more")]},
                                                             {"configurable": {"thread_id": KEY}})
        os.kill(proc.pid, signal.SIGCONT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGCONT)
            proc.kill()
            proc.wait()
    assert proc.returncode == 8, err
    assert "left as they were" not in err and "left as they were" not in out
    assert "Traceback" not in err
    assert err.splitlines()[-1].startswith("symfonic: error: 1 thread(s) pruned and committed, then written again"), err
    doc = json.loads(out)
    [t] = doc["threads"]
    assert t["status"] == "failed"
    assert t["reason"].startswith("committed (") and "written again" in t["reason"]
    table = next(n for n in t["rows_deleted"] if "checkpoint" in n and "write" not in n)
    assert t["rows_deleted"][table] == len(before) - 1
    assert t["verification"]["checked"] is True and t["verification"]["checkpoints_left_to_prune"] > 0
    assert doc["summary"]["failed"] == 1
    after = _ids(backend, url)
    assert not (before - {max(before)}) & after  # what the prune deleted stays deleted
    assert len(after) > 1  # the application's new checkpoints are there
