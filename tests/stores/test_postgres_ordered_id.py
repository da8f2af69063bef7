"""PostgreSQL's test of the ordered id form without a regex (stores/postgres/_common.py
is_ordered_id: a LIKE on the shape, the bytes against the hex digits, no fifth dash) accepts
exactly the ids ``clock.ORDERED_ID_REGEX`` accepts, in the server, over near misses of every kind.
The sweeps, the page, the erase re-check and compat's grace test all use it."""

from __future__ import annotations

from tests.support.ordered_ids import near_misses


def test_the_ordered_id_test_accepts_exactly_what_the_regex_accepts(request):
    import psycopg

    from symfonic_cli import clock
    from symfonic_cli.stores.postgres._common import is_ordered_id
    from tests.conftest import backend_for

    ids = near_misses()
    backend = backend_for("postgres", request)
    with psycopg.connect(backend.new_store(scenarios=False)) as conn:
        regex = f"v COLLATE \"C\" ~ '{clock.ORDERED_ID_REGEX}'"
        lower = f"lower(v) COLLATE \"C\" ~ '{clock.ORDERED_ID_REGEX}'"  # compat's form: the id lowercased
        sql = (f"SELECT v, {regex}, {is_ordered_id('v')}, {lower}, {is_ordered_id('lower(v)')} "
               "FROM unnest(%s::text[]) WITH ORDINALITY AS u(v, n) ORDER BY n")
        rows = conn.execute(sql, (ids,)).fetchall()
        assert [r[0] for r in rows] == ids  # every id reached the server as written
        for v, by_regex, by_test, lower_regex, lower_test in rows:
            assert by_test is by_regex is clock.is_ordered_id(v), repr(v)
            assert lower_test is lower_regex, repr(v)
        accepted = {v for v, by_regex, *_ in rows if by_regex}
        assert set(ids[:5]) <= accepted and len(accepted) < len(set(ids)) - 100  # both outcomes, many near misses
        assert any(lower_regex and not by_regex for _, by_regex, _, lower_regex, _ in rows)  # the upper-case ids
        # NULL for NULL, as the regex gives; and the same with no parameters ("%%" stays "%%": LIKE reads it as "%").
        assert conn.execute(f"SELECT {is_ordered_id('NULL::text')}, NULL::text ~ '^x$'").fetchone() == (None, None)
        literal = ", ".join("'" + v.replace("'", "''") + "'" for v in ids)
        bare = conn.execute(f"SELECT {is_ordered_id('v')} FROM unnest(ARRAY[{literal}]::text[]) WITH ORDINALITY AS u(v, n) ORDER BY n")
        assert [b for (b,) in bare.fetchall()] == [r[1] for r in rows]
