"""PostgreSQL's test of the ordered id form without a regex (stores/postgres/_common.py
is_ordered_id: a LIKE on the shape, the bytes against the hex digits, no fifth dash) accepts
exactly the ids ``clock.ORDERED_ID_REGEX`` accepts, in the server, over near misses of every kind.
The sweeps, the page, the erase re-check and compat's grace test all use it."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

REAL = "1f1f2384-ab91-66cb-bfff-139f4ec94f5a"


def _hostile() -> list[str]:
    from symfonic_cli import clock

    now = datetime.now(timezone.utc)
    real = [REAL, clock.id_at(now), clock.id_at(now - timedelta(days=400)), "00000000-0000-6000-0000-000000000000",
            "ffffffff-ffff-6fff-ffff-ffffffffffff"]
    ids = list(real)
    for i in (0, 7, 9, 14, 20, 35):  # one character replaced, dashes and the version's place included
        for c in ("A", "F", "g", "G", "-", "_", "%", " ", "\t", "\n", "\\", "'", ".", "6", "\u00e9", "\u0660",
                  "\uff10", "\u00b2", "\u212a", "\U0001f600", "x"):
            ids.append(REAL[:i] + c + REAL[i + 1:])
    ids += [
        REAL.upper(), REAL[:20] + REAL[20:].upper(), REAL[:35], REAL + "0", REAL + "\n", "\n" + REAL[1:], REAL[1:] + "\n",
        REAL[:35] + "-", "-" + REAL[1:], REAL.replace("-", ""), REAL.replace("-", "_"), REAL.replace("-", "%"),
        REAL[:8] + REAL[9:13] + "-" + REAL[8:9] + REAL[13:],  # a dash moved one place
        REAL[:18] + REAL[19:] + "-",  # the fourth dash moved to the end
        REAL[:14] + "1" + REAL[15:], REAL[:14] + "7" + REAL[15:],  # another UUID version
        REAL[:30] + "\u00e9" + REAL[32:],  # 35 characters, 36 bytes
        REAL[:34] + "\u00e9",  # 35 characters, 36 bytes, at the end
        REAL[:35] + "\u00e9", REAL[:35] + "\U0001f600",  # 36 characters, more bytes
        "________-____-6___-____-____________", "%", "%%-%%-%%-%%-%%-%%", "", " ", "step-1",
        "2026-11-30T08:24:52.123456+00:00", "2026-11-30T08:24:52.123456Z", REAL + "," + REAL,
        REAL[:-1] + "0," + REAL,
    ]
    return ids


def test_the_ordered_id_test_accepts_exactly_what_the_regex_accepts(request):
    import psycopg

    from symfonic_cli import clock
    from symfonic_cli.stores.postgres._common import is_ordered_id
    from tests.conftest import backend_for

    ids = _hostile()
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
