"""Stores written by real ``SymfonicAgent``s (symfonic-core 9.12, its default compaction) with a
scripted model, and symfonic-core's own restart-resume as the oracle.

The agent writes through its own checkpointer (``dev_sqlite_checkpoint_path``: LangGraph's
``AsyncSqliteSaver``). PostgreSQL and MongoDB stores get the same checkpoints and writes through
their real savers' ``put``/``put_writes`` (``backends.copy_store``): symfonic-core wires those savers
only behind its PostgreSQL/MongoDB graph-memory backends, which the suite does not run.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Iterator
from typing import Any

# key -> the user's questions. "long" is long enough that the default compaction (soft threshold
# 4,000 tokens, ~16,000 characters; keep the last 10 messages) fires more than once.
QUESTION = "question {i} from {who}: my order {n} has not arrived, " + "please look into it. " * 40
THREADS: dict[str, list[str]] = {
    "acme:eu:long": [QUESTION.format(i=i, who="Ada", n=1000 + i) for i in range(16)],
    "acme:_:short": ["where is order 1042?", "  and the invoice?  ", "thanks"],
    "globex:_:blocks": ["show me the chart", "and again", "one more"],
}
LONG, SHORT, BLOCKS = "acme:eu:long", "acme:_:short", "globex:_:blocks"


def _answers() -> Iterator[Any]:
    """Scripted replies, one per model call (the summariser's call included): plain text, text with
    surrounding blanks, text blocks with a non-text block, and a blank reply (replayed as nothing)."""
    from langchain_core.messages import AIMessage

    n = 0
    while True:
        n += 1
        if n % 7 == 3:
            yield AIMessage(content=[{"type": "text", "text": f"  here is chart {n}"}, {"type": "image_url", "image_url": {"url": "data:,"}},
                                     {"type": "text", "text": " (done)  "}])
        elif n % 7 == 5:
            yield AIMessage(content="   ")
        else:
            yield AIMessage(content=f"\n answer {n}: we are looking into it. " + "Thank you for waiting. " * 30)


class _Provider:
    def __init__(self) -> None:
        self._script = _answers()

    def get_chat_model(self, config: Any) -> Any:
        from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

        class Scripted(GenericFakeChatModel):
            def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
                return self

        return Scripted(messages=self._script)


def _scope(key: str) -> Any:
    from symfonic.agent.types import FrameworkTenantScope

    tenant, sub, _session = key.split(":")  # the test's own keys, built above
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return FrameworkTenantScope(tenant_id=tenant, sub_tenant_id=None if sub == "_" else sub)


def write_agent_store(path: str) -> None:
    """Run every thread of THREADS through one real SymfonicAgent checkpointing into ``path``."""
    from symfonic.agent.config import FrameworkConfig
    from symfonic.agent.engine import SymfonicAgent

    async def go() -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            agent = SymfonicAgent(_Provider(), config=FrameworkConfig(transcript_persistence_enabled=True,
                                                                      dev_sqlite_checkpoint_path=path))
        try:
            for key, questions in THREADS.items():
                for q in questions:
                    await agent.run(q, scope=_scope(key), session_id=key.split(":")[2])
        finally:
            await agent.aclose()

    import logging

    logging.disable(logging.WARNING)  # symfonic-core logs each memory layer it has not got
    try:
        asyncio.run(go())
    finally:
        logging.disable(logging.NOTSET)


def write_encrypted_agent_store(folder: Any, key: str) -> tuple[str, str]:
    """``write_agent_store`` into ``folder/plain.db``, copied through SqliteSaver with LangGraph's
    EncryptedSerializer (AES ``key``) into ``folder/enc.db``: both paths."""
    from langgraph.checkpoint.serde.encrypted import EncryptedSerializer

    from tests.conftest import backend_for
    from tests.support import backends

    plain, enc = str(folder / "plain.db"), str(folder / "enc.db")
    write_agent_store(plain)
    sqlite = backend_for("sqlite", None)
    with sqlite.saver(plain) as src, sqlite.saver(enc) as dst:
        dst.setup()
        dst.serde = EncryptedSerializer.from_pycryptodome_aes(key=key.encode())
        backends.copy_store(src, dst)
    return plain, enc


def own_copy(kind: str, agent_stores: Any, agent_sqlite: str, folder: Any) -> tuple[Any, str]:
    """(backend, url): a copy of the agent's store that a test may change. SQLite: the file;
    MongoDB: the documents and indexes of the session's copy (a copy through MongoDBSaver's
    upserts costs its server far more); PostgreSQL: put through the saver again (a database made
    from a template needs the template free of connections)."""
    import shutil

    from tests.support import backends

    backend, url = agent_stores(kind)
    if kind == "sqlite":
        path = str(folder / "agent.db")
        shutil.copyfile(agent_sqlite, path)
        return backend, path
    if kind == "mongodb":
        return backend, backend.copy_of(url)
    url = backend.new_store(scenarios=False)
    with backends.get("sqlite").saver(agent_sqlite) as src, backend.saver(url) as dst:
        backends.copy_store(src, dst)
    return backend, url


def rehydrated(saver: Any, key: str, max_entries: int) -> list[dict[str, Any]]:
    """What ``_maybe_rehydrate_working`` replays for ``key`` after a restart: the saver's latest
    checkpoint's ``channel_values["messages"]`` into a fresh ``WorkingLayer(max_entries)`` through
    its own ``rehydrate_from_messages``; the deque's rows (speaker, turn_id, content)."""
    from symfonic.memory.layers.working import WorkingLayer

    tuple_ = saver.get_tuple({"configurable": {"thread_id": key}})
    if tuple_ is None:
        return []
    messages = (tuple_.checkpoint or {}).get("channel_values", {}).get("messages", [])
    if not messages:
        return []
    layer = WorkingLayer(max_entries=max_entries)
    scope = _scope(key)

    async def go() -> list[Any]:
        await layer.rehydrate_from_messages(scope, messages)
        return await layer.get_context(scope)

    return [{"speaker": e.metadata["speaker"], "turn_id": e.metadata["turn_id"], "content": e.content} for e in asyncio.run(go())]
