"""clock.joined_ordered (a thread's ids joined by ',', tested at once) says what is_ordered_id says
of every id, whatever the ids hold: the listings' exact rule rests on it (stores/activity.py)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from symfonic_cli.clock import checkpoint_id_time, is_ordered_id, joined_ordered, ordered_id_time

_HEX = "0123456789abcdef"
ordered = st.builds(
    lambda a, b, c, d, e: f"{a}-{b}-6{c}-{d}-{e}",
    *(st.text(alphabet=_HEX, min_size=n, max_size=n) for n in (8, 4, 3, 4, 12)),
)


@st.composite
def near_miss(draw: st.DrawFn) -> str:
    """An ordered id with one character changed (upper case, a comma, another version, a
    non-hex letter, a non-ASCII letter), cut, lengthened (a newline too), or two ids joined into one."""
    cid = draw(ordered)
    i = draw(st.integers(0, 35))
    kind = draw(st.sampled_from(["char", "cut", "long", "two"]))
    if kind == "char":
        return cid[:i] + draw(st.sampled_from(list("ABCDEF,g-6 é0\x00"))) + cid[i + 1:]
    if kind == "cut":
        return cid[:i]
    if kind == "long":
        return cid + draw(st.sampled_from(["0", ",", "a", "\n"]))  # "\n": where a regex's "$" also matches
    return cid + "," + draw(ordered)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(ordered, ordered, near_miss(), st.text(max_size=40)), min_size=1, max_size=12))
def test_joined_ordered_is_is_ordered_id_of_every_id(ids: list[str]) -> None:
    assert joined_ordered(",".join(ids), len(ids)) == all(is_ordered_id(i) for i in ids)


@given(st.lists(ordered, min_size=2, max_size=6))
def test_a_missing_id_or_a_wrong_count_is_never_ordered(ids: list[str]) -> None:
    joined = ",".join(ids)
    assert joined_ordered(joined, len(ids))
    assert not joined_ordered(joined, len(ids) + 1)  # a NULL id: counted, not joined
    assert not joined_ordered(",".join(ids[1:]), len(ids))
    assert not joined_ordered(None, len(ids)) and not joined_ordered(joined.encode(), len(ids))


@given(ordered)
def test_ordered_id_time_is_checkpoint_id_time(cid: str) -> None:
    assert ordered_id_time(cid) == checkpoint_id_time(cid)
