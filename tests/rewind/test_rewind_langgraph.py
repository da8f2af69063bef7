"""thread rewind does what LangGraph's own ``update_state(config_of_X, None, as_node="__copy__")`` does
(issue 48), on every store kind, plain, encrypted (EncryptedSerializer) and DeltaChannel threads:
the same conversation written twice by a real graph with tools, an interrupt and a subgraph; on one
thread LangGraph's copy, on the other ``symfonic thread rewind --to X``; then ``get_state`` is the
same on both (values, next, tasks, interrupts, the fork's metadata), the history keeps every earlier
checkpoint, and the real graph continues the same way on both forks."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import HumanMessage

from tests.support import backends
from tests.support.cli import run
from tests.support.rewind_scenarios import cfg, scenarios, snapshot, write
from tests.transcript.test_encrypted import KEY, WRONG, _encrypted_serde

FORMATS = ("plain", "encrypted", "delta")


def _written(request, kind: str, fmt: str):
    """(backend, url, format, graphs): the scenarios written into a new store of the kind."""
    from tests.conftest import backend_for

    backend = backend_for(kind, request)
    url = backend.new_store(scenarios=False)
    with backend.saver(url) as saver:
        if fmt == "encrypted":
            saver.serde = _encrypted_serde(KEY)
        graphs = write(saver, fmt)
    return backend, url, fmt, graphs


@pytest.fixture(params=[(k, f) for k in backends.KINDS for f in FORMATS], ids=lambda p: f"{p[0]}-{p[1]}")
def written(request):
    return _written(request, *request.param)


@pytest.fixture(params=backends.KINDS)
def encrypted(request):
    return _written(request, request.param, "encrypted")


def _env(fmt: str) -> dict[str, str]:
    return {"LANGGRAPH_AES_KEY": KEY} if fmt == "encrypted" else {}


def _saver(backend, url: str, fmt: str):
    from contextlib import contextmanager

    @contextmanager
    def opened():
        with backend.saver(url) as saver:
            if fmt == "encrypted":
                saver.serde = _encrypted_serde(KEY)
            yield saver

    return opened()


def _ids(graph, key: str) -> list[str]:
    return [s.config["configurable"]["checkpoint_id"] for s in graph.get_state_history(cfg(key))]


def test_rewind_equals_langgraphs_copy_and_the_graph_continues_alike(written):
    backend, url, fmt, _ = written
    for name, (build, _, place) in scenarios(fmt).items():
        lg, sy = f"acme:_:{name}-lg", f"acme:_:{name}-sy"
        with _saver(backend, url, fmt) as saver:
            graph = build().compile(checkpointer=saver)
            target_lg, target_sy = _ids(graph, lg)[place], _ids(graph, sy)[place]
            before = _ids(graph, sy)
            graph.update_state(cfg(lg, target_lg), None, as_node="__copy__")
        res = run("thread", "rewind", "-s", url, sy, "--to", target_sy, "--idle-for", "0", "--yes", "-f", "json", env=_env(fmt))
        assert res.code == 0, (name, res.err)
        receipt = json.loads(res.out)["threads"][0]
        assert receipt["status"] == "rewound" and receipt["copy_of"] == target_sy and receipt["from_head"] == before[0]
        with _saver(backend, url, fmt) as saver:
            graph = build().compile(checkpointer=saver)
            a, b = graph.get_state(cfg(lg)), graph.get_state(cfg(sy))
            assert snapshot(b) == snapshot(a), name
            assert b.metadata["source"] == "fork" and b.config["configurable"]["checkpoint_id"] == receipt["new_checkpoint_id"]
            # the copy has the target's parent, as LangGraph's has
            parent = graph.get_state(cfg(sy, target_sy)).parent_config
            assert (b.parent_config or {}).get("configurable", {}).get("checkpoint_id") == (parent or {}).get("configurable", {}).get("checkpoint_id")
            after = _ids(graph, sy)
            assert after[0] == receipt["new_checkpoint_id"] and after[1:] == before, name  # every earlier checkpoint kept
            # the application continues: the same run on both forks
            more = {"messages": [HumanMessage(content="one more thing", id="more-1")]} if name in ("react", "delta") else None
            graph.invoke(more, cfg(lg))
            graph.invoke(more, cfg(sy))
            a, b = graph.get_state(cfg(lg)), graph.get_state(cfg(sy))
            assert snapshot(b) == snapshot(a), name
            if name in ("approve", "sub"):  # rewound to before the interrupt: the run reaches it again
                assert b.interrupts and b.interrupts[0].value == a.interrupts[0].value


def test_without_the_key_or_with_a_wrong_one_nothing_is_written(encrypted):
    backend, url, fmt, _ = encrypted
    name, (build, _, place) = next(iter(scenarios(fmt).items()))
    sy = f"acme:_:{name}-sy"
    with _saver(backend, url, fmt) as saver:
        graph = build().compile(checkpointer=saver)
        before = _ids(graph, sy)
    for env in ({}, {"LANGGRAPH_AES_KEY": WRONG}):
        res = run("thread", "rewind", "-s", url, sy, "--to", before[place], "--idle-for", "0", "--yes", env=env)
        assert res.code == 4, (env, res.code, res.err)
        assert "Traceback" not in res.err and KEY not in res.err + res.out
        with _saver(backend, url, fmt) as saver:
            assert _ids(build().compile(checkpointer=saver), sy) == before
