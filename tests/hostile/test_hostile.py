"""The hostile-store corpus: real stores written by real graphs, then damaged or crafted.

For every inspecting command, in every format and on every store kind: the exit code is a
documented one and never 1 (an unexpected error), stdout is complete valid JSON (every line for
jsonl) and encodes as UTF-8, and the store is unchanged (SQLite file hashes, a hash of every
PostgreSQL table, every MongoDB document and index). The crafted cases of issue #13 come first,
then generated ones (hypothesis, bounded and derandomized).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.support import hostile
from tests.support.cli import run
from tests.conftest import backend_for

T = hostile.TARGET
INSPECTING_CODES = {0, 3, 4, 5}  # README "Exit codes": what an inspecting command may end with
FORMATS = ("table", "text", "json", "jsonl")
COMPAT_FORMATS = ("table", "json", "jsonl")


def commands(cid: str | None = None) -> list[tuple[list[str], tuple[str, ...]]]:
    out = [
        (["transcript", "show", "-t", T], FORMATS),
        (["threads", "list"], FORMATS),
        (["store", "info"], FORMATS),
        (["compat", "report"], COMPAT_FORMATS),
        (["compat", "report", "-t", T], COMPAT_FORMATS),
        (["compat", "report", "--by-thread"], COMPAT_FORMATS),
        (["compat", "show", "-t", T], COMPAT_FORMATS),
        (["thread", "show", "-t", T], FORMATS),
        (["threads", "list", "--status", "done", "--with-size"], FORMATS),
        (["transcript", "show", "-t", T, "--tools"], FORMATS),
    ]
    if cid:
        out.append((["compat", "show", "-t", T, "--checkpoint", cid], COMPAT_FORMATS))
    return out


def check_output(args: list[str], fmt: str, r) -> None:
    where = f"{' '.join(args)} -f {fmt}: exit {r.code}, stderr {r.err[-400:]!r}"
    assert r.code in INSPECTING_CODES, where
    r.out.encode("utf-8")  # a real stdout is UTF-8: a lone surrogate would have cut it
    r.err.encode("utf-8")
    if fmt == "json" and r.out:
        json.loads(r.out)
    if fmt == "jsonl":
        for line in r.out.splitlines():
            json.loads(line)
    if r.code:
        assert r.err.startswith("symfonic: error: ") and r.err.count("\n") == 1, where


def inspect_everything(backend, url: str, *, cid: str | None = None, formats=None) -> dict[tuple, object]:
    """Every inspecting command in every format (or the one ``formats`` picks per command)."""
    before = hostile.fingerprint(backend.kind, url)
    results = {}
    for i, (args, fmts) in enumerate(commands(cid)):
        for fmt in fmts if formats is None else (formats(i, fmts),):
            r = run(*args, "--store", url, "--format", fmt)
            check_output(args, fmt, r)
            results[(tuple(args), fmt)] = r
    assert hostile.fingerprint(backend.kind, url) == before, "an inspecting command changed the store"
    return results


def agree(results, *, metadata_only: bool = True) -> None:
    """The store-wide report and the per-thread reports count the same findings."""
    whole = results.get((("compat", "report"), "json"))
    every = results.get((("compat", "report", "--by-thread"), "jsonl"))
    if whole is not None and metadata_only:
        # Damage to metadata alone is a finding in the report, never an unreadable store.
        assert whole.code in (0, 5), whole.err
    if whole is None or every is None or whole.code not in (0, 5) or every.code not in (0, 5):
        return  # exit 4: a document the tool refuses (named on stderr); nothing to compare
    data = json.loads(whole.out)
    rows = [json.loads(line) for line in every.out.splitlines()]
    for finding in ("corrupt", "newer", "legacy"):
        assert data["findings"][finding] == sum(r["findings"][finding] for r in rows), finding
    latest = {s: 0 for s in data["latest_checkpoint_of_threads"]}
    for r in rows:
        if r["latest"] and r["latest"]["checkpoint_ns"] == "":
            latest[r["latest"]["status"]] += 1
    assert latest == data["latest_checkpoint_of_threads"]
    anomalies: dict[str, int] = {}
    for r in rows:
        for a in r["anomalies"]:
            anomalies[a["anomaly"]] = anomalies.get(a["anomaly"], 0) + 1
    assert anomalies == {a["anomaly"]: a["checkpoints"] for a in data["anomalies"]}


_bases: dict[str, str] = {}


@pytest.fixture(scope="module")
def hb(shared_kind):
    """(backend, base store URL): the base written once per kind by the real graph."""
    if shared_kind.kind not in _bases:
        _bases[shared_kind.kind] = hostile.write_base(shared_kind)
    return shared_kind, _bases[shared_kind.kind]


def _sqlite(request):
    backend = backend_for("sqlite", request)
    if "sqlite" not in _bases:
        _bases["sqlite"] = hostile.write_base(backend)
    return backend, _bases["sqlite"]


def _report(url: str, *args: str) -> dict:
    r = run("compat", "report", "--store", url, "--format", "json", "--fail-on", "", *args)
    assert r.code == 0, r.err
    return json.loads(r.out)


# -- item 1: the verdict the application's saver reaches (SQLite: Python json over the metadata)

ENV1 = '{"format_version": 1, "writer_line": "migrated", "finalized": true}'
ENV2 = '{"format_version": 2, "writer_line": "migrated", "finalized": true}'


@pytest.mark.parametrize(
    "name, envelope_text, status, anomaly",
    [
        # SQLite's JSON functions read the first of duplicate keys, the saver's json the last.
        ("duplicate envelope key", ENV1 + ', "symfonic_envelope": ' + ENV2, "newer", "'symfonic_envelope'"),
        ("duplicate inside the envelope", ENV1[:-1] + ', "format_version": 2}', "newer", "'symfonic_envelope.format_version'"),
        ("duplicate, last one valid", ENV2 + ', "symfonic_envelope": ' + ENV1, "migrated", "'symfonic_envelope'"),
        ("escaped duplicate key", ENV2 + ', "symfonic\\u005fenvelope": ' + ENV1, "migrated", "'symfonic_envelope'"),
    ],
)
def test_duplicate_keys_read_as_the_saver_reads_them(request, name, envelope_text, status, anomaly):
    backend, base = _sqlite(request)
    url = hostile.clone(backend, base)
    hostile.sqlite_set(url, "metadata", hostile.metadata_with_envelope_text(url, envelope_text))
    saver_meta = json.loads(hostile.sqlite_metadata(url))  # what SqliteSaver's json.loads reads
    with backend.saver(url) as saver:
        assert saver.get_tuple({"configurable": {"thread_id": T}}).metadata == saver_meta
    one = _report(url, "--thread", T)
    assert one["latest"]["status"] == status
    assert one["latest"]["format_version"] == saver_meta["symfonic_envelope"]["format_version"]
    assert [a["anomaly"] for a in one["anomalies"]] == [
        f"duplicate keys in metadata: {anomaly} (the last one is read, as the saver's json does)"
    ]
    whole = _report(url)
    assert whole["latest_checkpoint_of_threads"][status] >= 1
    assert {a["anomaly"]: a["checkpoints"] for a in whole["anomalies"]} == {one["anomalies"][0]["anomaly"]: 1}
    expected_gate = 5 if status == "newer" else 0
    assert run("compat", "report", "--store", url, "--fail-on", "newer").code == expected_gate
    assert run("compat", "report", "--store", url, "--thread", T, "--fail-on", "newer").code == expected_gate
    agree(inspect_everything(backend, url))


def test_non_finite_numbers_and_long_integers_are_values(request):
    backend, base = _sqlite(request)
    cases = {
        # NaN anywhere in metadata is a value (SqliteSaver writes and reads it).
        '{"format_version": 1, "writer_line": "migrated", "finalized": true, "score": NaN, "low": -Infinity}': ("migrated", None),
        '{"format_version": NaN, "writer_line": "migrated"}': ("corrupt", "envelope carries no usable format_version (nan)"),
        '{"format_version": Infinity, "writer_line": "migrated"}': ("corrupt", "envelope carries no usable format_version (inf)"),
        # Over Python's default 4,300 digits: still an integer, and newer than 1.
        '{"format_version": 1' + "0" * 5000 + ', "writer_line": "migrated"}': ("newer", None),
        '{"format_version": 1, "writer_line": "migrated", "boundary_sequence": ' + "9" * 6000 + "}": ("migrated", None),
    }
    for text, (status, reason) in cases.items():
        url = hostile.clone(backend, base)
        hostile.sqlite_set(url, "metadata", hostile.metadata_with_envelope_text(url, text))
        one = _report(url, "--thread", T)
        assert one["latest"]["status"] == status, text[:80]
        if reason:
            assert one["latest"]["reason"] == reason
        if status == "newer":
            assert one["latest"]["reason"].startswith("envelope format_version an integer of about 5,001 digits is newer")
            r = run("compat", "report", "--store", url, "--format", "json")
            assert r.code == 5 and json.loads(r.out)["newer"][0]["format_version"] == int("1" + "0" * 5000)
        whole = _report(url)
        assert "damaged" not in json.dumps(whole)
        agree(inspect_everything(backend, url))


@pytest.mark.parametrize(
    "raw, reason",
    [
        (b'{"symfonic_envelope": ' + b"[" * 2500 + b"]" * 2500 + b"}", "metadata nested deeper than 2,000 levels"),
        (b'{"symfonic_envelope": {"format_version": 1' + b"0" * 30000 + b"}}", "metadata holds an integer of more than 20,000 digits"),
        (b'{"symfonic_envelope": {"format_version": 1,', "metadata is not JSON"),
        (b'{"symfonic_envelope": "caf\xc3\xa9 \xff"}', "metadata is not text in a JSON encoding"),
    ],
)
def test_metadata_the_saver_cannot_decode_is_a_finding_on_that_row(request, raw, reason):
    backend, base = _sqlite(request)
    url = hostile.clone(backend, base)
    cid = hostile.sqlite_set(url, "metadata", raw)
    one = _report(url, "--thread", T)
    assert one["latest"]["checkpoint_id"] == cid and one["latest"]["status"] == "corrupt"
    assert one["latest"]["reason"].startswith(reason)
    assert (one["latest"]["readable_by_legacy"], one["latest"]["readable_by_migrated"]) == (False, False)
    whole = _report(url)
    assert [c["reason"] for c in whole["corrupt"]] == [one["latest"]["reason"]]
    assert whole["verdict"] == {"migrated_can_read_all": False, "legacy_can_read_all": False}
    agree(inspect_everything(backend, url, cid=cid))


def test_lone_surrogates_are_escaped_never_cut_stdout(request):
    backend, base = _sqlite(request)
    url = hostile.clone(backend, base)
    cid = hostile.sqlite_set(url, "metadata", hostile.metadata_with_envelope_text(
        url, '{"format_version": 1, "writer_line": "migrated", "package_version": "\\ud800", "note": "\\udfff"}'))
    results = inspect_everything(backend, url, cid=cid)
    full = json.loads(results[(("compat", "show", "-t", T, "--checkpoint", cid), "json")].out)
    assert full["raw_envelope"]["package_version"] == "\ud800"
    assert "\\ud800" in results[(("compat", "show", "-t", T, "--checkpoint", cid), "json")].out
    assert "\\ud800" in results[(("compat", "show", "-t", T, "--checkpoint", cid), "table")].out


# -- item 3: no exit 1 from data: transcripts


def _sqlite_messages(url: str, messages: list) -> None:
    import sqlite3

    conn = sqlite3.connect(url)
    ns, cid = hostile.sqlite_latest(url)
    t, b = conn.execute("SELECT type, checkpoint FROM checkpoints WHERE thread_id = ? AND checkpoint_id = ?", (T, cid)).fetchone()
    conn.close()
    hostile.sqlite_set(url, "checkpoint", hostile.checkpoint_blob_with_messages(None, (t, bytes(b)), messages)[1])


def _json_checkpoint(url: str, messages: list, depth: int = 3000) -> str:
    ns, cid = hostile.sqlite_latest(url)
    cp = {"v": 1, "id": cid, "ts": "2026-11-30T10:00:00+00:00", "channel_values": {"messages": messages},
          "channel_versions": {}, "versions_seen": {}}
    hostile.sqlite_set(url, "type", "json")
    deep = '{"type": "group", "content": [' * depth + '{"type": "text", "text": "deep"}' + "]}" * depth
    hostile.sqlite_set(url, "checkpoint", json.dumps(cp).replace('"@@DEEP@@"', deep).encode())
    return cid


@pytest.mark.parametrize(
    "messages, warning",
    [
        ([hostile.message_ext("HumanMessage", id=[1, 2])], "'id' is a list, not a string"),
        ([hostile.message_ext("AIMessage", id={"a": 1})], "'id' is a dict, not a string"),
        ([hostile.message_ext("HumanMessage", type=["human"])], "'type' is a list, not a string"),
        ([{"type": {"x": 1}, "content": "hi", "id": "z"}], "'type' is a dict, not a string"),
        ([hostile.message_ext("HumanMessage", content={"a": hostile.nested_blocks(120)})], None),
    ],
)
def test_odd_message_fields_are_shown_from_raw_fields_with_a_warning(request, messages, warning):
    backend, base = _sqlite(request)
    url = hostile.clone(backend, base)
    _sqlite_messages(url, messages)
    r = run("transcript", "show", "--store", url, "-t", T, "-f", "json")
    assert r.code == 0, r.err
    rows = json.loads(r.out)
    assert len(rows) == 1
    if warning:
        assert f"symfonic: warning: message 0 of the checkpoint shown from its raw fields: {warning}" in r.err
        assert rows[0]["message_id"] == (None if "'id'" in warning else {"z": "z"}.get(rows[0]["message_id"], "m-1"))
    inspect_everything(backend, url)


def test_json_checkpoint_with_lone_surrogate_and_deep_blocks(request):
    backend, base = _sqlite(request)
    url = hostile.clone(backend, base)
    messages = [
        {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "HumanMessage"],
         "kwargs": {"content": "bad \ud800 text", "id": "s-1"}},
        {"type": "human", "id": "deep", "content": {"blocks": "@@DEEP@@"}},
    ]
    _json_checkpoint(url, messages, depth=300)  # 600 levels: decoded and printed
    results = inspect_everything(backend, url)
    r = results[(("transcript", "show", "-t", T), "json")]
    assert r.code == 0, r.err
    rows = json.loads(r.out)
    assert rows[0]["content"] == "bad \ud800 text" and "\\ud800" in r.out
    assert rows[1]["content"].startswith("{'blocks': {'type': 'group', 'content': [{'type': 'group'")
    assert "\\ud800" in results[(("transcript", "show", "-t", T), "text")].out
    # Deeper than LangGraph's decoder goes (Python's recursion limit): exit 4 naming the
    # checkpoint, nothing on stdout.
    cid = _json_checkpoint(url, messages, depth=5000)
    r = run("transcript", "show", "--store", url, "-t", T, "-f", "json")
    assert (r.code, r.out) == (4, "") and f"checkpoint {cid} cannot be decoded" in r.err
    inspect_everything(backend, url)


# -- every store kind: crafted envelopes and document shapes


def _craft_envelope(backend, url: str, value) -> str:
    """Put ``value`` (a Python value) under the envelope key of the target's latest checkpoint."""
    if backend.kind == "sqlite":
        text = json.dumps(value, allow_nan=True)
        return hostile.sqlite_set(url, "metadata", hostile.metadata_with_envelope_text(url, text))
    if backend.kind == "postgres":
        return hostile.pg_set_envelope_text(backend, url, json.dumps(value))
    stored = {k: hostile.typed(v) for k, v in value.items()} if isinstance(value, dict) else hostile.typed(value)
    return hostile.mongo_update(backend, url, {"$set": {"metadata.symfonic_envelope": stored}})


@pytest.mark.parametrize(
    "value, status",
    [
        ({"format_version": 1, "writer_line": "migrated", "finalized": True, "x": [[[[[[1]]]]]]}, "migrated"),
        ({"format_version": 2 ** 63 - 1, "writer_line": "migrated"}, "newer"),
        ({"format_version": 1, "writer_line": "migrated", "boundary_sequence": 1.5, "safe_boundary": 7}, "migrated"),
        ({"format_version": 1, "writer_line": "\x1b[31m\u202e"}, "corrupt"),
        ([1, {"format_version": 1}], "corrupt"),
    ],
)
def test_crafted_envelopes_on_every_kind(hb, value, status):
    backend, base = hb
    url = hostile.clone(backend, base)
    cid = _craft_envelope(backend, url, value)
    one = _report(url, "--thread", T)
    assert one["latest"]["checkpoint_id"] == cid and one["latest"]["status"] == status
    agree(inspect_everything(backend, url, cid=cid))


def test_long_integers_in_jsonb(request):
    backend = backend_for("postgres", request)
    if "postgres" not in _bases:
        _bases["postgres"] = hostile.write_base(backend)
    url = hostile.clone(backend, _bases["postgres"])
    cid = hostile.pg_set_envelope_text(backend, url, '{"format_version": 1' + "0" * 5000 + ', "writer_line": "migrated"}')
    one = _report(url, "--thread", T)
    assert one["latest"]["status"] == "newer"
    deep = hostile.clone(backend, _bases["postgres"])
    hostile.pg_set_envelope_text(backend, deep, '{"format_version": 1, "x": 1' + "0" * 30000 + "}")
    assert _report(deep, "--thread", T)["latest"]["reason"] == "metadata holds an integer of more than 20,000 digits"
    agree(inspect_everything(backend, url, cid=cid))
    agree(inspect_everything(backend, deep))


MONGO_DOCUMENTS = {
    "int checkpoint_id": {"$set": {"checkpoint_id": 12345}},
    "null checkpoint_ns": {"$set": {"checkpoint_ns": None}},
    "array thread_id": {"$set": {"thread_id": ["hostile:_:target", "x"]}},
    "int type": {"$set": {"type": 7}},
    "string checkpoint": {"$set": {"checkpoint": "not bytes"}},
    "metadata not a document": {"$set": {"metadata": "oops"}},
    "metadata leaf of the wrong shape": {"$set": {"metadata.step": [1, 2, 3]}},
    "envelope leaf of the wrong shape": {"$set": {"metadata.symfonic_envelope": {"format_version": {"$x": 1}}}},
    "no metadata": {"$unset": {"metadata": ""}},
}


@pytest.mark.parametrize("case", sorted(MONGO_DOCUMENTS))
def test_mongodb_documents_of_unexpected_shape(request, case):
    backend = backend_for("mongodb", request)
    if "mongodb" not in _bases:
        _bases["mongodb"] = hostile.write_base(backend)
    url = hostile.clone(backend, _bases["mongodb"])
    update = MONGO_DOCUMENTS[case]
    if "envelope leaf" in case:  # "$x" is no field name a saver writes; stored through a raw key
        update = {"$set": {"metadata.symfonic_envelope": {"format_version": "1"}}}
    hostile.mongo_update(backend, url, update)
    agree(inspect_everything(backend, url), metadata_only=case.startswith(("metadata", "envelope", "no metadata")))


# -- generated: hypothesis mutates metadata JSON, checkpoint blobs and documents


def _number():
    return st.one_of(
        st.integers(-(2 ** 70), 2 ** 70).map(str),
        st.integers(0, 3).map(lambda n: "1" + "0" * (4300 + n * 4000)),
        st.floats(allow_nan=True, allow_infinity=True).map(lambda f: json.dumps(f)),
        st.sampled_from(["NaN", "Infinity", "-Infinity", "-0", "1e400", "1.0", "0.1e1"]),
    )


def _string():
    return st.one_of(
        st.text(max_size=8).map(json.dumps),
        st.sampled_from(['"\\ud800"', '"\\udfff x"', '"migrated"', '"legacy"', '"\\u005f"', '"\\u0000"', '"\x1b[2J"']),
    )


_FIELDS = st.sampled_from(["format_version", "writer_line", "safe_boundary", "finalized", "boundary_sequence",
                           "boundary_id", "package_version", "symfonic_envelope", "x"])


def _json_text(pg: bool):
    scalar = st.one_of(st.sampled_from(["true", "false", "null", "1", "2", '"1"']), _number(), _string())
    if pg:  # jsonb refuses NaN, Infinity and lone surrogates: those stay SQLite's
        scalar = scalar.filter(lambda s: "NaN" not in s and "Infinity" not in s and "\\ud" not in s
                               and "\\u0000" not in s and s not in ("1e400",) and "e+" not in s and "inf" not in s)

    def containers(inner):
        pairs = st.lists(st.tuples(_FIELDS, inner), max_size=5)
        return st.one_of(
            st.lists(inner, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]"),
            pairs.map(lambda ps: "{" + ", ".join(f'"{k}": {v}' for k, v in ps) + "}"),
        )

    return st.recursive(scalar, containers, max_leaves=12)


def _envelope_text(pg: bool):
    fields = st.lists(st.tuples(_FIELDS, _json_text(pg)), max_size=7)
    base = st.fixed_dictionaries({
        "format_version": st.sampled_from(["1", "2", "0", "1.0"]) | _number(),
        "writer_line": st.sampled_from(['"migrated"', '"legacy"']) | _string(),
    })
    return st.builds(
        lambda b, extra: "{" + ", ".join([f'"{k}": {v}' for k, v in b.items()] + [f'"{k}": {v}' for k, v in extra]) + "}",
        base, fields,
    ) | _json_text(pg)


# Bounded: a fixed number of examples, derandomized, and no shrinking (a failure prints its
# example as generated; shrinking across whole stores could take minutes).
_BOUND = dict(derandomize=True, deadline=None, database=None, suppress_health_check=list(HealthCheck),
              phases=(Phase.explicit, Phase.generate))
_settings = settings(max_examples=25, **_BOUND)
_pick = st.data()


def _format_picker(data):
    return lambda i, fmts: data.draw(st.sampled_from(fmts), label=f"format of command {i}")


def _generated(backend, base, data, craft, *, metadata_only: bool = True) -> None:
    url = hostile.clone(backend, base)
    cid = craft(url)
    results = inspect_everything(backend, url, cid=cid, formats=_format_picker(data))
    for args in (("compat", "report"), ("compat", "report", "--by-thread")):
        fmt = "json" if args == ("compat", "report") else "jsonl"
        if (args, fmt) not in results:
            r = run(*args, "--store", url, "--format", fmt)
            check_output(list(args), fmt, r)
            results[(args, fmt)] = r
    agree(results, metadata_only=metadata_only)


@settings(max_examples=20, **_BOUND)
@given(data=_pick, envelope=_envelope_text(pg=False), duplicate=st.none() | _envelope_text(pg=False))
def test_generated_sqlite_metadata(request, data, envelope, duplicate):
    backend, base = _sqlite(request)

    def craft(url):
        text = envelope if duplicate is None else f'{envelope}, "symfonic_envelope": {duplicate}'
        return hostile.sqlite_set(url, "metadata", hostile.metadata_with_envelope_text(url, text))

    _generated(backend, base, data, craft)


@_settings
@given(data=_pick, blob=st.binary(max_size=64), type_=st.sampled_from(["msgpack", "json", "null", "bytes", "pickle", "x"]),
       cut=st.integers(0, 400))
def test_generated_sqlite_checkpoint_blobs(request, data, blob, type_, cut):
    backend, base = _sqlite(request)

    def craft(url):
        import sqlite3

        ns, cid = hostile.sqlite_latest(url)
        conn = sqlite3.connect(url)
        real = bytes(conn.execute("SELECT checkpoint FROM checkpoints WHERE thread_id = ? AND checkpoint_id = ?", (T, cid)).fetchone()[0])
        conn.close()
        # A real blob cut short and followed by noise, under a declared type.
        hostile.sqlite_set(url, "checkpoint", real[:cut] + blob)
        hostile.sqlite_set(url, "type", type_)
        return cid

    _generated(backend, base, data, craft)  # compat reads metadata only: unaffected by blobs


@settings(max_examples=15, **_BOUND)
@given(data=_pick, envelope=_envelope_text(pg=True))
def test_generated_postgres_metadata(request, data, envelope):
    backend = backend_for("postgres", request)
    if "postgres" not in _bases:
        _bases["postgres"] = hostile.write_base(backend)
    def craft(url):
        import psycopg

        try:
            return hostile.pg_set_envelope_text(backend, url, envelope)
        except psycopg.DataError:  # jsonb refuses it (a lone surrogate, NaN): nothing stored, nothing to read
            return None

    _generated(backend, _bases["postgres"], data, craft)


def _bson_value():
    leaf = st.one_of(
        st.none(), st.booleans(), st.integers(-(2 ** 63), 2 ** 63 - 1), st.floats(allow_nan=True),
        st.text(max_size=6), st.binary(max_size=8),
        st.builds(lambda v: hostile.typed(v), st.one_of(
            st.integers(-(2 ** 63), 2 ** 63 - 1), st.floats(allow_nan=True), st.text(max_size=6), st.booleans(), st.none(),
            st.lists(st.integers(0, 3), max_size=3))),
        st.builds(lambda t, b: [t, b], st.sampled_from(["msgpack", "json", "null", "pickle", "x"]), st.binary(max_size=8)),
    )
    return st.recursive(leaf, lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["format_version", "writer_line", "finalized", "safe_boundary",
                                          "boundary_sequence", "a"]), inner, max_size=4),
    ), max_leaves=8)


_MONGO_FIELDS = st.sampled_from(["metadata.symfonic_envelope", "metadata.symfonic_envelope.format_version",
                                 "metadata.symfonic_envelope.writer_line", "metadata.step", "metadata.source",
                                 "metadata", "checkpoint_id", "checkpoint_ns", "thread_id", "type", "checkpoint",
                                 "parent_checkpoint_id"])


@settings(max_examples=15, **_BOUND)
@given(data=_pick, field=_MONGO_FIELDS, value=_bson_value())
def test_generated_mongodb_documents(request, data, field, value):
    backend = backend_for("mongodb", request)
    if "mongodb" not in _bases:
        _bases["mongodb"] = hostile.write_base(backend)

    def craft(url):
        if field in ("thread_id",) and isinstance(value, str):
            return None  # another key, not damage
        return hostile.mongo_update(backend, url, {"$set": {field: value}})

    _generated(backend, _bases["mongodb"], data, craft, metadata_only=field.startswith("metadata"))


def test_values_at_the_limits_print_in_full(request):
    """20,000 digits and 2,000 levels are read and printed exactly (README "Limits")."""
    backend, base = _sqlite(request)
    url = hostile.clone(backend, base)
    big = "7" * 20000
    deep = "[" * 1990 + "]" * 1990
    cid = hostile.sqlite_set(url, "metadata", hostile.metadata_with_envelope_text(
        url, '{"format_version": 1, "writer_line": "migrated", "n": ' + big + ', "d": ' + deep + "}"))
    r = run("compat", "show", "--store", url, "-t", T, "--checkpoint", cid, "-f", "json")
    assert r.code == 0, r.err
    assert f'"n": {big}' in r.out
    from symfonic_cli.codec.metadata_json import deep as room

    with room():
        raw = json.loads(r.out, parse_int=str)["raw_envelope"]
    assert raw["n"] == big


def test_migrate_refuses_a_thread_nested_too_deeply_to_decode(request, tmp_path):
    """Too deep for the decoder: that thread is `failed`, naming the checkpoint; the others copy."""
    backend, base = _sqlite(request)
    url = hostile.clone(backend, base)
    cid = _json_checkpoint(url, [{"type": "human", "id": "deep", "content": {"blocks": "@@DEEP@@"}}], depth=5000)
    target = str(tmp_path / "target.db")
    before = hostile.fingerprint("sqlite", url)
    r = run("migrate", "--from", url, "--to", target, "--all", "--init-target", "--format", "json")
    assert r.code == 7, r.err
    data = json.loads(r.out)
    status = {t["thread"] if "thread" in t else t["key"]: t for t in data["threads"]}
    assert status[T]["status"] == "failed" and f"checkpoint {cid}" in status[T]["message"]
    assert {k: v["status"] for k, v in status.items() if k != T} == {k: "copied" for k in hostile.THREADS if k != T}
    assert hostile.fingerprint("sqlite", url) == before
