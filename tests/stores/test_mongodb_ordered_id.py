"""MongoDB's test of the ordered id form is the server's regex (stores/mongodb/_common.py
ORDERED_ID_PCRE): in the listing's and the run states' ``$group``, compat's grace test (on the
lowercased id) and the erase re-check's ``find``, it accepts exactly what ``clock.is_ordered_id``
accepts, over near misses of every kind. PCRE's "$" also matches before a final newline, so an id
with a trailing newline was in the ordered form here and odd everywhere else."""

from __future__ import annotations

from tests.support.ordered_ids import REAL, near_misses


def test_the_servers_regex_accepts_exactly_what_python_accepts(request):
    from symfonic_cli import clock
    from symfonic_cli.stores.mongodb._common import ODD_GROUP, ORDERED_ID_PCRE
    from tests.conftest import backend_for

    ids = near_misses()
    backend = backend_for("mongodb", request)
    coll = backend.client[backend.new_database()]["ids"]
    coll.insert_many([{"n": n, "checkpoint_id": v} for n, v in enumerate(ids)])
    rows = list(coll.aggregate([
        {"$group": {"_id": "$n", "v": {"$first": "$checkpoint_id"}, "odd": ODD_GROUP}},
        {"$project": {"v": 1, "odd": 1, "lower": {"$regexMatch": {"input": {"$toLower": "$v"}, "regex": ORDERED_ID_PCRE}}}},
        {"$sort": {"_id": 1}},
    ]))
    assert [r["v"] for r in rows] == ids  # every id reached the server as written
    for r in rows:
        assert r["odd"] is not clock.is_ordered_id(r["v"]), repr(r["v"])
        assert r["lower"] is clock.is_ordered_id(r["v"].lower()), repr(r["v"])
    assert not clock.is_ordered_id(REAL + "\n") and any(r["v"] == REAL + "\n" and r["odd"] for r in rows)
    # The erase re-check's find, and its $not.
    from bson.regex import Regex

    ordered = Regex(ORDERED_ID_PCRE)
    found = {d["checkpoint_id"] for d in coll.find({"checkpoint_id": {"$regex": ordered}})}
    assert found == {v for v in ids if clock.is_ordered_id(v)} and REAL in found
    others = {d["checkpoint_id"] for d in coll.find({"checkpoint_id": {"$not": ordered}})}
    assert others == {v for v in ids if not clock.is_ordered_id(v)} and REAL + "\n" in others
