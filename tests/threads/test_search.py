"""threads search on every store kind: planted phrases, Unicode case folding, no false positives
and no false negatives against decoding every thread; rows identical to transcript show."""

from __future__ import annotations

import json

import pytest

from symfonic_cli.location import parse_location
from symfonic_cli.search.run import search
from symfonic_cli.stores import open_store
from tests.support.cli import run
from tests.support.scenarios import MULTIMODAL

THREADS = {
    "acme:eu:s-1": [
        [("human", "Please refund order 1042, it never came.")],
        [("ai", "A REFUND for order 1042 is on its way.")],
    ],
    "acme:us:s-1": [
        [("human", "Ich wohne in der Straße 5.")],
        [("human", "Also: BIG STRASSE 7, 200 \u212a outside, see the \ufb01le.")],
    ],
    "acme:_:s-2": [
        [("human", MULTIMODAL)],
        [("ai_tool", "issue_refund", {"order": 1042, "confirm": True}, "call-9"), ("tool", "refund issued: yes", "call-9", "issue_refund")],
    ],
    "globex:_:s-1": [
        [("human", "The secret phrase is purple-otter.")],
        [("remove_first",)],
        [("human", "nothing to see here; refunded? no.")],
    ],
    "globex:_:s-2": [[("human", "weiß nicht, ob das hilft")]],
}

NEEDLES = ["refund", "REFUND", "straße", "STRASSE", "strasse", "k", "file", "1042", "order 1042",
           "this [image_url]untyped", "look at", "purple-otter", "zzz-not-there", "ß", "weiss", "true", "call-9",
           "issue_refund", "on its way", "\u212a"]


def _write(saver) -> None:
    from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, ToolMessage
    from langgraph.graph import START, MessagesState, StateGraph

    b = StateGraph(MessagesState)
    b.add_node("noop", lambda state: {})
    b.add_edge(START, "noop")
    graph = b.compile(checkpointer=saver)
    for key, turns in THREADS.items():
        config = {"configurable": {"thread_id": key}}
        n = 0
        for turn in turns:
            msgs = []
            for spec in turn:
                n += 1
                if spec[0] == "human":
                    msgs.append(HumanMessage(content=spec[1], id=f"{key}-{n}"))
                elif spec[0] == "ai":
                    msgs.append(AIMessage(content=spec[1], id=f"{key}-{n}"))
                elif spec[0] == "ai_tool":
                    msgs.append(AIMessage(content="", id=f"{key}-{n}", tool_calls=[{"name": spec[1], "args": spec[2], "id": spec[3]}]))
                elif spec[0] == "tool":
                    msgs.append(ToolMessage(content=spec[1], tool_call_id=spec[2], name=spec[3], id=f"{key}-{n}"))
                elif spec[0] == "remove_first":
                    msgs.append(RemoveMessage(id=f"{key}-1"))
            graph.invoke({"messages": msgs}, config)


@pytest.fixture(scope="module")
def store(shared_kind):  # only read by the tests
    url = shared_kind.new_store(scenarios=False)
    with shared_kind.saver(url) as saver:
        _write(saver)
    return url


def _search(url, needle, *extra):
    r = run("threads", "search", "-s", url, needle, "-f", "json", *extra)
    assert r.code == 0, r.err
    return json.loads(r.out)


def _transcripts(url, tools):
    out = {}
    for key in THREADS:
        r = run("transcript", "show", "-s", url, "-t", key, "-f", "json", *(["--tools"] if tools else []))
        assert r.code == 0, r.err
        out[key] = json.loads(r.out)
    return out


def _brute_force(transcripts, needle, *, tools=False, case_sensitive=False):
    """Every thread's transcript decoded in full, each shown field compared by str.casefold."""
    def norm(s):
        return s if case_sensitive else s.casefold()

    found = set()
    for key, rows in transcripts.items():
        for row in rows:
            fields = [row["content"]]
            if tools:
                for call in row.get("tool_calls") or []:
                    fields += [call["name"], call["id"], json.dumps(call["args"], ensure_ascii=False)]
                fields += [v for v in (row.get("name"), row.get("tool_call_id")) if v is not None]
            if any(norm(needle) in norm(f) for f in fields if isinstance(f, str)):
                found.add((key, row["index"]))
    return found


def test_search_finds_exactly_what_decoding_every_thread_finds(store):
    for tools in (False, True):
        transcripts = _transcripts(store, tools)
        for case_sensitive in (False, True):
            extra = (["--tools"] if tools else []) + (["--case-sensitive"] if case_sensitive else [])
            assert {(h["key"], h["index"]) for h in _search(store, "refund", *extra)} == _brute_force(
                transcripts, "refund", tools=tools, case_sensitive=case_sensitive)
            with open_store(parse_location(store)) as st:  # the function the command calls, on one store
                for needle in NEEDLES:
                    got = {(h.key, h.index) for h in search(st, needle, tools=tools, case_sensitive=case_sensitive)}
                    assert got == _brute_force(transcripts, needle, tools=tools, case_sensitive=case_sensitive), (needle, extra)


def test_folding_and_planted_phrases(store):
    def keys(needle, *extra):
        return sorted({h["key"] for h in _search(store, needle, *extra)})

    # straße folds to strasse: Straße and STRASSE alike, and a plain "strasse" finds the ß.
    assert [(h["key"], h["index"]) for h in _search(store, "straße")] == [("acme:us:s-1", 0), ("acme:us:s-1", 1)]
    assert keys("strasse") == ["acme:us:s-1"]
    assert keys("STRASSE", "--case-sensitive") == ["acme:us:s-1"]
    assert [h["index"] for h in _search(store, "STRASSE", "--case-sensitive")] == [1]
    assert keys("weiss") == ["globex:_:s-2"]  # weiß
    assert keys("file") == ["acme:us:s-1"]  # the fi ligature
    assert "acme:us:s-1" in keys("k")  # the Kelvin sign folds to k
    # Blocks of a content list are joined as the transcript joins them, placeholders included.
    assert keys("this [image_url]untyped") == ["acme:_:s-2"]
    # A message removed before the latest checkpoint is not part of the conversation any more.
    assert keys("purple-otter") == []
    # Tool calls only with --tools: arguments as JSON, tool names and call ids.
    assert keys("1042") == ["acme:eu:s-1"]
    assert keys("1042", "--tools") == ["acme:_:s-2", "acme:eu:s-1"]
    assert keys('"confirm": true', "--tools") == ["acme:_:s-2"]
    assert keys("zzz-not-there") == []


def test_rows_are_the_transcripts_rows(store):
    hits = _search(store, "refund", "--tools")
    assert hits and all(set(h) >= {"key", "index", "role", "timestamp", "snippet"} for h in hits)
    for h in hits:
        r = run("transcript", "show", "-s", store, "-t", h["key"], "-f", "json", "--tools")
        row = json.loads(r.out)[h["index"]]
        assert (row["role"], row["timestamp"], row["message_id"]) == (h["role"], h["timestamp"], h["message_id"])
        assert h["timestamp"] is not None


def test_filters_limit_and_nothing_found(store):
    assert {h["key"] for h in _search(store, "refund", "--tenant", "acme", "--sub-tenant", "eu")} == {"acme:eu:s-1"}
    assert {h["key"] for h in _search(store, "refund", "--tenant", "globex")} == {"globex:_:s-1"}
    assert {h["key"] for h in _search(store, "refund", "--session", "s-2", "--tools")} == {"acme:_:s-2"}
    assert {h["key"] for h in _search(store, "refund", "--active-within", "1d")} == {"acme:eu:s-1", "acme:_:s-2", "globex:_:s-1"}
    assert _search(store, "refund", "--inactive-for", "1d") == []
    assert len({h["key"] for h in _search(store, "refund", "--limit", "1")}) == 1
    assert _search(store, "refund", "--limit", "0") == []
    r = run("threads", "search", "-s", store, "zzz-not-there", "-f", "json")
    assert (r.code, r.out) == (0, "[]\n")
    r = run("threads", "search", "-s", store, "")
    assert r.code == 2 and "empty" in r.err


@pytest.mark.parametrize("walk", [1, 2, 1000])
def test_a_page_is_the_first_threads_of_the_whole_search(store, monkeypatch, walk):
    # A page (a limit: the MCP tool's rows, --limit) walks the listing's newest threads first and
    # stops once full, the store narrowing past PAGE_WALK threads; its rows are the whole search's.
    from symfonic_cli.search import run as search_run

    monkeypatch.setattr(search_run, "PAGE_WALK", walk)
    with open_store(parse_location(store)) as st:
        for needle, tools in (("refund", True), ("1042", False), ("e", True), ("zzz-not-there", False)):
            whole = list(search(st, needle, tools=tools))
            order = list(dict.fromkeys(h.key for h in whole))
            for limit in (1, 2, 3, 5):
                page = list(search(st, needle, tools=tools, limit=limit))
                assert page == [h for h in whole if h.key in order[:limit]], (needle, limit)
            in_session = [h for h in whole if h.key.endswith(":s-1")]
            first_two = list(dict.fromkeys(h.key for h in in_session))[:2]
            assert list(search(st, needle, tools=tools, session="s-1", limit=2)) == [h for h in in_session if h.key in first_two]


def test_a_snippet_is_escaped_and_cut_around_the_match(tmp_path):
    from tests.support.backends import get

    backend = get("sqlite")
    url = backend.new_store(scenarios=False)
    text = "x" * 300 + " needle\x1b[31m here \n" + "y" * 300
    with backend.saver(url) as saver:
        from langchain_core.messages import HumanMessage
        from langgraph.graph import START, MessagesState, StateGraph

        b = StateGraph(MessagesState)
        b.add_node("noop", lambda state: {})
        b.add_edge(START, "noop")
        b.compile(checkpointer=saver).invoke({"messages": [HumanMessage(content=text)]}, {"configurable": {"thread_id": "t:_:s"}})
    (hit,) = _search(url, "NEEDLE")
    # JSON keeps the text (JSON escapes it once; issue #37): never a doubled escape.
    assert "needle\x1b[31m here \n" in hit["snippet"] and "\\x1b" not in hit["snippet"]
    assert hit["snippet"].startswith("…") and hit["snippet"].endswith("…") and len(hit["snippet"]) <= 100


def test_the_store_narrows_before_decoding(store):
    """Only the threads whose latest root checkpoint holds the bytes (or content that is not one
    string: the multimodal thread) are decoded; the rest are settled by the byte test."""
    from symfonic_cli.search.prefilter import Prefilter
    from symfonic_cli.search.run import _may_match

    def candidates(needle, **kw):
        pre = Prefilter(needle, case_sensitive=kw.get("case_sensitive", False), tools=kw.get("tools", False))
        with open_store(parse_location(store)) as st:
            narrowed = st.search_candidates(pre)
            if narrowed is not None:
                return set(narrowed)
            assert st.kind == "mongodb"  # the one kind that cannot narrow in the database
            return {k for k in THREADS if _may_match(st, k, pre)}

    assert candidates("order 1042") == {"acme:eu:s-1", "acme:_:s-2"}
    assert candidates("ORDER 1042") == {"acme:eu:s-1", "acme:_:s-2"}
    assert candidates("ORDER 1042", case_sensitive=True) == {"acme:_:s-2"}
    assert candidates("zzz-not-there") == {"acme:_:s-2"}
    assert candidates("purple-otter") == {"acme:_:s-2"}  # removed: no longer in the latest checkpoint
    assert candidates("zzz-not-there", tools=True) == {"acme:_:s-2"}
    # "refund" has letters other characters fold to (f, n): looked for whole, or those characters.
    assert candidates("REFUND") == {"acme:eu:s-1", "acme:_:s-2", "globex:_:s-1", "acme:us:s-1"}  # that one holds \ufb01
    assert candidates("RETURN") == {"acme:_:s-2"}
    assert candidates("strasse") == {"acme:us:s-1", "acme:_:s-2", "globex:_:s-2"}  # both hold ß
    assert candidates("k") >= {"acme:us:s-1"}  # the Kelvin sign


def test_the_exotic_characters_are_every_character_that_folds_to_hold_an_ascii_letter():
    from symfonic_cli.search.fold import fold, nfc
    from symfonic_cli.search.prefilter import EXOTIC, NFC_UNSAFE

    found: dict[str, set[str]] = {}
    made: set[str] = set()
    for cp in range(0x110000):
        ch = chr(cp)
        if 0xD800 <= cp <= 0xDFFF:
            continue  # lone surrogates: no text holds them
        folded = fold(ch)
        for x in folded:
            if x.isascii() and (len(folded) > 1 or ch not in (x, x.upper())):
                found.setdefault(x, set()).add(ch)
        if not ch.isascii():
            made |= {x for x in nfc(ch) if x.isascii()}
    assert made == set(NFC_UNSAFE)
    # Only characters beyond ASCII: an ASCII letter folds to itself alone.
    assert {x: set(chars) for x, chars in EXOTIC.items()} == found
    assert all(not c.isascii() for chars in found.values() for c in chars)
