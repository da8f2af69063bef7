"""The private parts of LangGraph and its savers that symfonic relies on, each exercised directly.

pyproject.toml pins langgraph and the savers to the major versions these tests pass on; an upgrade
that renames or changes one of these fails here, by name, instead of deep inside a migrate or a
transcript. Each test says where the private name is used.
"""

from __future__ import annotations

import inspect
import re
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


def test_the_safe_lists_codec_exthook_reads():
    """codec/exthook.py decodes with LangGraph's safe lists, ``_msgpack.SAFE_MSGPACK_TYPES`` and
    ``SAFE_MSGPACK_METHODS`` (tests/stores/test_exthook.py decodes every ext type both ways)."""
    from langgraph.checkpoint.serde import _msgpack

    assert ("langchain_core.messages.ai", "AIMessage") in _msgpack.SAFE_MSGPACK_TYPES
    assert ("langgraph.types", "Interrupt") in _msgpack.SAFE_MSGPACK_TYPES
    assert ("datetime", "datetime", "fromisoformat") in _msgpack.SAFE_MSGPACK_METHODS


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


def _plain_values():
    from hypothesis import strategies as st

    leaf = st.one_of(st.none(), st.booleans(), st.integers(-(2 ** 63), 2 ** 64 - 1), st.floats(allow_nan=False),
                     st.text(max_size=8), st.binary(max_size=8))
    return st.recursive(leaf, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4) | st.integers(0, 9), inner, max_size=3),
                        max_leaves=10)


def test_values_without_objects_decode_as_the_serializer_decodes_them():
    """codec/strict.py decodes a msgpack value that holds no object (a MongoDB metadata leaf)
    with ormsgpack and the serializer's own option, objects with codec/exthook.py."""
    import ormsgpack
    from hypothesis import given, settings
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    from symfonic_cli.codec import strict

    serde = JsonPlusSerializer(pickle_fallback=False, allowed_msgpack_modules=None)

    @settings(max_examples=200, derandomize=True, deadline=None, database=None)
    @given(value=_plain_values())
    def same(value):
        type_, data = serde.dumps_typed(value)  # None and bytes are types of their own
        assert strict.loads(type_, data, what="v") == serde.loads_typed((type_, data))

    same()
    for value in (_messages(), {"m": _messages()[0]}):  # objects
        type_, data = serde.dumps_typed(value)
        assert strict.loads(type_, data, what="v") == serde.loads_typed((type_, data))
    bad = ormsgpack.packb("loop")[:-1]
    with pytest.raises(ValueError) as theirs:
        serde.loads_typed(("msgpack", bad))
    with pytest.raises(strict.StoreError, match=re.escape(f"cannot be decoded (ValueError: {theirs.value})")):
        strict.loads("msgpack", bad, what="v")  # not msgpack: the serializer's error, named


def test_a_plain_value_is_decoded_without_importing_the_serializer():
    import subprocess
    import sys

    code = ("import sys, ormsgpack\nfrom symfonic_cli.codec.strict import loads\n"
            "assert loads('msgpack', ormsgpack.packb({'source': 'loop', 'step': 3}), what='v') == {'source': 'loop', 'step': 3}\n"
            "print('langgraph.checkpoint.serde.jsonplus' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_a_closed_mongodb_store_leaves_no_thread_to_wait_for_at_exit(request):
    """stores/mongodb/connect.py drops a closed client's stopped monitors from pymongo's
    ``periodic_executor._EXECUTORS``, which pymongo joins at exit (each noticed its close only on
    its next 0.5 s poll)."""
    from pymongo import periodic_executor

    import symfonic_cli
    from tests.conftest import backend_for

    url = backend_for("mongodb", request).new_store()
    before = {ref for ref in periodic_executor._EXECUTORS if ref() is not None}
    with symfonic_cli.open_store(url) as store:
        assert len(store.threads()) > 0
        mine = {ref for ref in periodic_executor._EXECUTORS if ref() is not None} - before
        assert mine  # the client's monitors, registered for the join at exit
    assert not mine & set(periodic_executor._EXECUTORS)
    assert all(ref() is None or not ref()._stopped for ref in periodic_executor._EXECUTORS)
