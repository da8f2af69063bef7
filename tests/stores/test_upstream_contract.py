"""The private parts of LangGraph and its savers that symfonic relies on, each exercised directly.

pyproject.toml pins langgraph and the savers to the major versions these tests pass on; an upgrade
that renames or changes one of these fails here, by name, instead of deep inside a migrate or a
transcript. Each test says where the private name is used.
"""

from __future__ import annotations

import inspect
import sqlite3

import pytest
from langchain_core.messages import AIMessage, HumanMessage


def _messages() -> list:
    return [HumanMessage(content="hello", id="m-1"), AIMessage(content="hi", id="m-2")]


def test_jsonplus_default_and_option_give_the_serializers_own_bytes():
    """codec/reuse.py packs with ``jsonplus._msgpack_default`` and ``jsonplus._option``."""
    import ormsgpack
    from langgraph.checkpoint.serde import jsonplus

    serde = jsonplus.JsonPlusSerializer()
    value = {"messages": _messages(), "n": 1}
    ours = ormsgpack.packb(value, default=jsonplus._msgpack_default, option=jsonplus._option)
    assert serde.dumps_typed(value) == ("msgpack", ours)


def test_reusing_serializer_wraps_the_plain_serializer_and_keeps_its_bytes():
    """codec/reuse.py only wraps when the private names exist: prove it still wraps."""
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    from symfonic_cli.codec.reuse import ReusingSerializer, reusing

    serde = JsonPlusSerializer()
    wrapped = reusing(serde)
    assert isinstance(wrapped, ReusingSerializer)
    value = {"messages": _messages()}
    assert wrapped.dumps_typed(value) == serde.dumps_typed(value)


def test_unpack_ext_hook_decodes_like_loads_typed():
    """codec/reuse.py decodes with the strict serializer's ``_unpack_ext_hook``."""
    import ormsgpack
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    serde = JsonPlusSerializer(pickle_fallback=False, allowed_msgpack_modules=None)
    typ, data = serde.dumps_typed({"messages": _messages()})
    direct = ormsgpack.unpackb(data, ext_hook=serde._unpack_ext_hook, option=ormsgpack.OPT_NON_STR_KEYS)
    assert direct == serde.loads_typed((typ, data))
    assert [m.id for m in direct["messages"]] == ["m-1", "m-2"]


def test_delta_snapshot_type_exists():
    """transcript/read.py refuses delta-encoded message channels by ``_DeltaSnapshot``."""
    from langgraph.checkpoint.serde.types import _DeltaSnapshot

    assert isinstance(_DeltaSnapshot, type) and issubclass(_DeltaSnapshot, tuple)


def test_sqlite_saver_setup_flag_and_task_path_flag(tmp_path):
    """stores/sqlite/copy.py (and benchmarks/bench_migrate.py) set ``is_setup`` and ``_has_task_path``
    so the saver neither runs setup (it commits) nor probes the table itself."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(str(tmp_path / "s.db"), check_same_thread=False)
    try:
        saver = SqliteSaver(conn)
        assert saver.is_setup is False
        saver.setup()
        assert saver.is_setup is True and saver._has_task_path is True
    finally:
        conn.close()
    # setup() returns early on the flag, and the pending-writes query reads the task-path flag.
    assert "self.is_setup" in inspect.getsource(SqliteSaver.setup)
    assert "self._has_task_path" in inspect.getsource(SqliteSaver)


def test_postgres_saver_writes_through_its_cursor_method():
    """stores/postgres/copy.py replaces ``PostgresSaver._cursor`` to record put/put_writes' statements."""
    from langgraph.checkpoint.postgres import PostgresSaver

    assert "pipeline" in inspect.signature(PostgresSaver._cursor).parameters
    for method in (PostgresSaver.put, PostgresSaver.put_writes):
        src = inspect.getsource(method)
        assert "self._cursor(" in src, method.__name__
        assert "self.conn" not in src, method.__name__  # every statement goes through _cursor


def test_mongodb_saver_attributes_are_the_ones_copy_sets(request):
    """stores/mongodb/copy.py builds a MongoDBSaver with ``__new__`` and sets its attributes itself
    (its constructor builds indexes): the constructor must set exactly those."""
    from langgraph.checkpoint.base import BaseCheckpointSaver

    from tests.conftest import backend_for
    from tests.support.mongo_server import database_of

    backend = backend_for("mongodb", request)
    url = backend.new_store(scenarios=False)
    with backend.saver(url) as saver:
        assert database_of(url) == saver.db.name
        base = BaseCheckpointSaver.__new__(BaseCheckpointSaver)
        BaseCheckpointSaver.__init__(base)
        own, inherited = set(vars(saver)), set(vars(base))
    assert "serde" in inherited  # BaseCheckpointSaver.__init__ (called by copy.py) sets it
    assert own == inherited | {"client", "db", "checkpoint_collection", "writes_collection", "ttl"}


@pytest.mark.parametrize("name", ["put", "put_writes"])
def test_mongodb_saver_writes_through_its_collection_attributes(name):
    from langgraph.checkpoint.mongodb import MongoDBSaver

    src = inspect.getsource(getattr(MongoDBSaver, name))
    assert "self.checkpoint_collection" in src or "self.writes_collection" in src
