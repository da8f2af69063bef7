"""codec/exthook.py decodes what LangGraph's strict serializer decodes, side by side.

Every ext type the savers write (messages, Send, Interrupt, Command, datetimes, UUID, Decimal,
sets, paths, patterns, zones, IP addresses, enums, pydantic models, dataclasses, named tuples,
DeltaChannel snapshots, numpy arrays; classes off the safe list; damaged and unknown exts) is
encoded by the serializer every saver uses (``JsonPlusSerializer().dumps_typed``) and decoded by
``strict.loads`` and by ``JsonPlusSerializer(allowed_msgpack_modules=None).loads_typed``: equal
values of the same types, the same reprs, the same refused class names. Then every checkpoint and
write of stores the real graphs wrote (the scenarios, DeltaChannel threads, an encrypted copy).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import enum
import ipaddress
import pathlib
import re
import sqlite3
import uuid
import zoneinfo
from collections import deque
from typing import Any, NamedTuple

import ormsgpack
import pytest

from symfonic_cli.codec import exthook, strict
from tests.support.cli import imports_of


class Colour(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class Order:
    id: int
    when: dt.datetime


class Pair(NamedTuple):
    a: int
    b: str


def _upstream():
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    return JsonPlusSerializer(pickle_fallback=False, allowed_msgpack_modules=None)


def _writer():
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    return JsonPlusSerializer()  # what every saver writes with


def _same(ours: Any, theirs: Any) -> None:
    """Equal, of the same type, all the way down (and the same repr, which names every field)."""
    assert type(ours) is type(theirs), (ours, theirs)
    if isinstance(theirs, dict):
        assert list(ours) == list(theirs)
        for k in theirs:
            _same(ours[k], theirs[k])
    elif isinstance(theirs, (list, tuple)) and type(theirs) in (list, tuple):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _same(a, b)
    elif type(theirs).__module__ == "numpy":
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape and (ours == theirs).all()
        return
    else:
        assert ours == theirs
    assert repr(ours) == repr(theirs)


def _both(type_: str, data: bytes) -> tuple[Any, set[str], Any, set[str]]:
    with strict.collect_blocked() as ours_blocked:
        ours = strict.loads(type_, data, what="v")
    serde = _upstream()
    strict._serializer()  # its event listener reports LangGraph's refusals to the active collector
    with strict.collect_blocked() as theirs_blocked:
        theirs = serde.loads_typed((type_, data))
    return ours, set(ours_blocked), theirs, set(theirs_blocked)


def _values() -> dict[str, Any]:
    from langchain_core.documents import Document
    from langchain_core.messages import (AIMessage, AIMessageChunk, ChatMessage, FunctionMessage, HumanMessage,
                                         RemoveMessage, SystemMessage, ToolMessage)
    from langgraph.checkpoint.serde.types import _DeltaSnapshot
    from langgraph.types import Command, Interrupt, Send
    from pydantic import BaseModel

    class Refund(BaseModel):
        amount: int
        currency: str = "EUR"

    berlin = zoneinfo.ZoneInfo("Europe/Berlin")
    messages = [
        SystemMessage(content="be brief", id="s-1"),
        HumanMessage(content=[{"type": "text", "text": "hi"}, "there"], id="h-1", name="ana"),
        AIMessage(content="", id="a-1", tool_calls=[{"name": "lookup", "args": {"q": 1}, "id": "c-1", "type": "tool_call"}],
                  usage_metadata={"input_tokens": 1, "output_tokens": 2, "total_tokens": 3}),
        ToolMessage(content="42", tool_call_id="c-1", id="t-1", status="error"),
        AIMessageChunk(content="par", id="a-2"), ChatMessage(content="x", role="critic", id="c-2"),
        FunctionMessage(content="{}", name="f", id="f-1"), RemoveMessage(id="h-1"),
    ]
    return {
        "messages": {"messages": messages},
        "send": [Send("tool", {"x": 1}), Send("model", messages[:2])],
        "interrupt": [Interrupt(value={"question": "approve?", "amount": 42}, id="i-1")],
        "command": Command(goto="b", update={"k": 1}, resume={"i-1": "yes"}),
        "datetimes": [dt.datetime(2026, 12, 3, 10, 0, 1, 5, tzinfo=dt.timezone.utc), dt.datetime(2026, 1, 2, 3, 4, 5),
                      dt.datetime(2026, 3, 29, 2, 30, tzinfo=berlin), dt.date(2026, 2, 28), dt.time(23, 59, 1, 7),
                      dt.timedelta(days=3, microseconds=9), dt.timezone(dt.timedelta(hours=-5), "EST"), berlin],
        "uuid": [uuid.UUID("1f1ef016-3817-620b-8001-6d91334f7cac"), uuid.uuid4()],
        "numbers": [decimal.Decimal("1.10"), decimal.Decimal("-Infinity")],
        "sets": [{1, 2}, frozenset({"a"}), deque([1, 2], maxlen=5), {"s": {3}}],
        "paths": [pathlib.Path("/tmp/a b"), pathlib.Path("x/y"), re.compile(r"a+b", re.I)],
        "ips": [ipaddress.IPv4Address("10.0.0.1"), ipaddress.IPv6Network("::/64"), ipaddress.IPv4Interface("10.0.0.1/8")],
        "document": Document(page_content="doc", metadata={"src": "x"}, id="d-1"),
        "enum": {"c": Colour.RED},  # off the safe list: its raw value, named
        "pydantic": [Refund(amount=42)],
        "dataclass": Order(7, dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)),
        "namedtuple": Pair(1, "b"),
        "delta": _DeltaSnapshot(messages[:3]),
        "delta-empty": {"messages": _DeltaSnapshot([])},
        "error": ValueError("boom"),  # stored as its repr
        "plain": {"source": "loop", "step": 3, 4: [None, True, 1.5, b"\x00"]},
    }


@pytest.mark.parametrize("name", list(_values()))
def test_each_ext_type_decodes_as_langgraphs_strict_serializer(name):
    type_, data = _writer().dumps_typed(_values()[name])
    ours, ours_blocked, theirs, theirs_blocked = _both(type_, data)
    _same(ours, theirs)
    assert ours_blocked == theirs_blocked


def test_the_safe_list_is_langgraphs_and_refusals_are_named():
    type_, data = _writer().dumps_typed({"e": Colour.RED, "o": Order(1, dt.datetime(2026, 1, 1))})
    ours, ours_blocked, theirs, _ = _both(type_, data)
    assert ours_blocked == {f"{__name__}.Colour", f"{__name__}.Order"}
    assert ours["e"] == "red" and ours["o"]["id"] == 1


def test_numpy_arrays_decode_as_langgraph_decodes_them():
    np = pytest.importorskip("numpy")
    value = {"c": np.arange(6, dtype="<i4").reshape(2, 3), "f": np.asfortranarray(np.ones((2, 2))), "s": np.arange(10)[::2]}
    ours, _, theirs, _ = _both(*_writer().dumps_typed(value))
    for k in value:
        _same(ours[k], theirs[k])


def _ext(code: int, payload: Any) -> bytes:
    return ormsgpack.packb(ormsgpack.Ext(code, payload if isinstance(payload, bytes) else ormsgpack.packb(payload)))


@pytest.mark.parametrize("data", [
    _ext(0, ["datetime", "datetime", "not a time"]),                # the constructor raises: its payload
    _ext(0, ["os", "system", "true"]),                              # off the safe list: its payload, named
    _ext(1, ["pathlib", "Path", 5]),                                # not unpackable args
    _ext(2, ["langgraph.types", "Interrupt", {"nope": 1}]),         # wrong fields
    _ext(2, ["langgraph.types", "Interrupt", {"value": 1, "ns": ["a:1"]}]),  # a pre-0.6 interrupt: its id derived
    _ext(3, ["datetime", "datetime", "2026-01-02T03:04:05", "fromisoformat"]),
    _ext(3, ["datetime", "datetime", "2026-01-02", "now"]),         # a method off the list
    _ext(3, ["datetime", "datetime", "2026-01-02"]),                # no method named
    _ext(4, ["builtins", "set", {}]),                               # pydantic v1 of a non-model
    _ext(5, ["langchain_core.messages.ai", "AIMessage", {"content": 1, "type": "ai"}]),  # invalid: model_construct
    _ext(5, ["langchain_core.messages.ai", "AIMessage", 3]),        # fields not a mapping
    _ext(5, b"\xc1"),                                               # not msgpack inside
    _ext(0, b"\xc1"), _ext(0, [1]), _ext(0, [["x"], "y", 1]),       # short or unhashable names
    _ext(6, ["<i8", [2], "C", b"\x01" * 8]), _ext(6, [1]),          # numpy: a bad one is None
    _ext(7, [1, 2]), _ext(42, b"anything"),                         # a snapshot of a list; an unknown code
    b"\xc7",                                                        # not msgpack at all
])
def test_damaged_and_unusual_exts_decode_or_fail_as_upstream(data):
    try:
        _upstream().loads_typed(("msgpack", data))
    except Exception as exc:  # then ours fails with LangGraph's error, named
        with pytest.raises(strict.StoreError) as ours:
            strict.loads("msgpack", data, what="v")
        assert str(ours.value) == f"v cannot be decoded ({type(exc).__name__}: {exc})"
        return
    ours, ours_blocked, theirs, theirs_blocked = _both("msgpack", data)
    _same(ours, theirs)
    assert ours_blocked == theirs_blocked


def test_the_ext_codes_are_langgraphs():
    from langgraph.checkpoint.serde import jsonplus

    for name in ("EXT_CONSTRUCTOR_SINGLE_ARG", "EXT_CONSTRUCTOR_POS_ARGS", "EXT_CONSTRUCTOR_KW_ARGS", "EXT_METHOD_SINGLE_ARG",
                 "EXT_PYDANTIC_V1", "EXT_PYDANTIC_V2", "EXT_NUMPY_ARRAY", "EXT_DELTA_SNAPSHOT"):
        assert getattr(exthook, name) == getattr(jsonplus, name), name


def test_thread_shows_interrupt_view_reads_what_langgraphs_interrupt_holds():
    """``thread show`` reads an Interrupt's value and id from its fields when LangGraph would keep
    them as given, and lets LangGraph build any other (a pre-0.6 one derives its id)."""
    from symfonic_cli.threadstate.show import _VIEWS

    for fields in ({"value": {"q": [1]}, "id": "i-1"}, {"value": 1, "id": "i-2", "response_schema": None},
                   {"value": 1, "ns": ["node:1"]}, {"value": 1}):
        data = _ext(2, ["langgraph.types", "Interrupt", fields])
        viewed = strict.loads("msgpack", data, what="v", views=_VIEWS)
        built = _upstream().loads_typed(("msgpack", data))
        assert (viewed.value, viewed.id) == (built.value, built.id)


def _rows(path) -> list[tuple[str, Any, bytes]]:
    con = sqlite3.connect(path)
    try:
        rows = con.execute("SELECT checkpoint_id, type, checkpoint FROM checkpoints").fetchall()
        rows += con.execute("SELECT checkpoint_id || '/' || channel, type, value FROM writes").fetchall()
    finally:
        con.close()
    return rows


def _sweep(path) -> int:
    n = 0
    for where, type_, data in _rows(path):
        if type_ is None or type_ == "null":
            continue
        ours, ours_blocked, theirs, theirs_blocked = _both(type_, data)
        _same(ours, theirs)
        assert ours_blocked == theirs_blocked, where
        n += 1
    return n


def test_every_value_the_real_graphs_stored_decodes_as_upstream(sqlite_master, tmp_path):
    from tests.support.delta_scenarios import write_delta_scenarios
    from langgraph.checkpoint.sqlite import SqliteSaver

    assert _sweep(sqlite_master) > 50
    delta = tmp_path / "delta.db"
    with SqliteSaver.from_conn_string(str(delta)) as saver:
        write_delta_scenarios(saver, 3)
    assert _sweep(delta) > 20


def test_encrypted_values_decode_as_upstream(sqlite_master, tmp_path, monkeypatch):
    from langgraph.checkpoint.serde.encrypted import EncryptedSerializer

    key = "k3y-Of-32-bytes-for-AES-256-eax!"
    monkeypatch.setenv("LANGGRAPH_AES_KEY", key)
    enc = EncryptedSerializer.from_pycryptodome_aes(key=key.encode())
    upstream = EncryptedSerializer.from_pycryptodome_aes(_upstream(), key=key.encode())
    n = 0
    for _, type_, data in _rows(sqlite_master):
        if type_ in (None, "null", "bytes"):
            continue
        value = _writer().loads_typed((type_, data))
        etype, edata = enc.dumps_typed(value)
        assert etype == f"{type_}+aes"
        _same(strict.loads(etype, edata, what="v"), upstream.loads_typed((etype, edata)))
        n += 1
    assert n > 50


@pytest.mark.parametrize("args", [
    ("thread", "show", "acme:eu:s-003"), ("thread", "show", "acme:_:s-001"), ("thread", "history", "acme:_:s-001"),
    ("transcript", "show", "acme:_:s-001"),
    # A rewritten and a subgraph thread: the restart line's and transcript's times read ids of
    # checkpoints the stored writes do not link.
    ("thread", "show", "acme:_:s-rewrite"), ("transcript", "show", "acme:_:s-rewrite"), ("thread", "show", "initech:_:s-sub"),
    ("transcript", "show", "initech:_:s-sub"),
])
def test_inspecting_a_plain_store_imports_no_langchain_core_or_langsmith(sqlite_master, args):
    """Issue #37: one thread's commands start fast; LangGraph's serializer would import
    langchain_core's tracers and langsmith (1 to 3 s), a message class langchain_core (0.5 to 1 s)."""
    _imports_nothing_heavy(sqlite_master, args)


@pytest.fixture(scope="module")
def demo_store(demo_master):
    """``symfonic demo``'s store: real graphs, ``acme:eu:s-003`` waits at an interrupt (only read)."""
    return demo_master


@pytest.mark.parametrize("args", [("thread", "show", "acme:eu:s-003"), ("thread", "history", "acme:eu:s-003")])
def test_an_interrupted_thread_is_shown_without_langgraph_types(demo_store, args):
    """The interrupt's value and id come from its stored fields (``langgraph.types``: 1 s to import)."""
    out = _imports_nothing_heavy(demo_store, args)
    assert "approve" in out


def _imports_nothing_heavy(store, args) -> str:
    out, loaded, code = imports_of([*args, "-s", str(store)],
                                   ("langchain_core", "langsmith", "langgraph.checkpoint.serde.jsonplus", "langgraph.types", "pydantic"))
    assert (loaded, code) == ([], 0), out[-600:]
    return out
