"""threads search folds Unicode normalisation on both sides (issue 33 item 9): NFC, so a letter
typed precomposed finds it stored as a letter and a combining accent, and the other way round,
with and without --case-sensitive, on every store kind; what NFC keeps apart (an accent-less
``ecole``, compatibility forms such as ``ﬁ``) stays apart."""

from __future__ import annotations

import json
import unicodedata

import pytest

from tests.support.cli import run

THREADS = {
    "uni:_:nfc": "Rendez-vous \u00e0 l'\u00e9cole \u00e0 9h",
    "uni:_:nfd": "Rendez-vous a\u0300 l'e\u0301cole a\u0300 9h",
    "uni:_:upper-nfd": "L'E\u0301COLE est ferme\u0301e",
    "uni:_:plain": "an ecole without its accent, and a \ufb01le",
    "uni:_:hangul": "\u1112\u1161\u11ab\u1100\u1173\u11af \u1112\u1161\u11ab \u110c\u116e\u11af",  # 한글 한 줄, as jamo
}
NEEDLES = ["\u00e9cole", "e\u0301cole", "\u00c9COLE", "E\u0301COLE", "\u00e0 l'", "a\u0300 l'", "ferm\u00e9e",
           "ecole", "file", "\ud55c\uae00", "\u1112\u1161\u11ab"]


def _fold(text: str, case_sensitive: bool) -> str:
    n = unicodedata.normalize("NFC", text)
    return n if case_sensitive else unicodedata.normalize("NFC", n.casefold())


@pytest.fixture
def store(any_kind):
    from langchain_core.messages import HumanMessage
    from langgraph.graph import START, MessagesState, StateGraph

    url = any_kind.new_store(scenarios=False)
    b = StateGraph(MessagesState)
    b.add_node("noop", lambda state: {})
    b.add_edge(START, "noop")
    with any_kind.saver(url) as saver:
        graph = b.compile(checkpointer=saver)
        for key, text in THREADS.items():
            graph.invoke({"messages": [HumanMessage(content=text, id=f"{key}-1")]}, {"configurable": {"thread_id": key}})
    return url


def test_precomposed_and_combining_forms_find_each_other(store):
    from symfonic_cli.location import parse_location
    from symfonic_cli.search.run import search
    from symfonic_cli.stores import open_store

    for case_sensitive in (False, True):
        extra = ["--case-sensitive"] if case_sensitive else []
        for needle in NEEDLES:
            want = {k for k, text in THREADS.items() if _fold(needle, case_sensitive) in _fold(text, case_sensitive)}
            r = run("threads", "search", "-s", store, needle, "-f", "json", *extra)
            assert r.code == 0, r.err
            assert {h["key"] for h in json.loads(r.out)} == want, (needle, case_sensitive)
            with open_store(parse_location(store)) as st:
                for hit in search(st, needle, case_sensitive=case_sensitive):
                    # The match is the stored characters that fold to the needle, whole.
                    assert _fold(hit.text[hit.start:hit.end], case_sensitive) == _fold(needle, case_sensitive), (needle, hit)
    # The case: typed precomposed, stored decomposed (and the reverse), either case.
    assert {h["key"] for h in json.loads(run("threads", "search", "-s", store, "\u00e9cole", "-f", "json").out)} == {
        "uni:_:nfc", "uni:_:nfd", "uni:_:upper-nfd"}
    assert {h["key"] for h in json.loads(run("threads", "search", "-s", store, "e\u0301cole", "--case-sensitive", "-f", "json").out)} == {
        "uni:_:nfc", "uni:_:nfd"}
