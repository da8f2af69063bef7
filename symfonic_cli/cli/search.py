"""What ``threads search`` does once its options are parsed: the API's hits (``Store.matches``), rendered."""

from __future__ import annotations

from symfonic_cli.cli.common import check_format, environment as run_environment
from symfonic_cli.errors import UsageError
from symfonic_cli.limits import JSON_SNIPPET
from symfonic_cli.vocabulary import RECORD_FORMATS

# typing.TYPE_CHECKING without importing typing (TAB completion loads the cli modules).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from symfonic_cli.environment import Environment

COLUMNS = ("key", "index", "role", "timestamp", "snippet")
HEADERS = ("key", "#", "role", "timestamp", "snippet")


def threads_search(
    store: str | None, text: str, *, case_sensitive: bool = False, tools: bool = False, tenant: str | None = None,
    sub_tenant: str | None = None, session: str | None = None, inactive_for: str | None = None, inactive_since: str | None = None,
    active_within: str | None = None, limit: int | None = None, fmt: str | None = None, environment: Environment | None = None,
) -> None:
    from symfonic_cli import render
    from symfonic_cli.cli.common import open_reading
    from symfonic_cli.api.store import activity_window

    env = environment or run_environment()
    out_format = check_format(fmt, env=env, formats=RECORD_FORMATS)
    if session is not None and not session:
        raise UsageError("--session is empty")
    activity_window(inactive_for, inactive_since, active_within, zone=env.zone())  # judged before the store is opened
    with open_reading(store, env, zone=env.zone()) as st:
        hits = st.matches(text, case_sensitive=case_sensitive, tools=tools, tenant=tenant, sub_tenant=sub_tenant,
                          session=session, inactive_for=inactive_for, inactive_since=inactive_since,
                          active_within=active_within, limit=limit)
        if out_format != "table":  # every format but the table writes the records as they are
            n = render.write_records((h.to_json(JSON_SNIPPET) for h in hits), fmt=out_format, columns=COLUMNS,
                                     stream=env.stdout, environment=env)
        else:
            # A hit keeps its text until the widths are known: cut it to what a snippet can show.
            kept = [_trimmed(h) for h in hits]
            n = _write_table(kept, st.location, env)
    for line in hits.skipped:
        render.warn(env, f"not searched: {render.escape_inline(line)}")
    if not n and render.is_terminal(env.stderr):
        env.stderr.write("symfonic: no message matches\n")


def _trimmed(hit: Any) -> Any:
    from dataclasses import replace

    lo = max(0, hit.start - 400)
    return replace(hit, text=hit.text[lo:hit.end + 400], start=hit.start - lo, end=hit.end - lo)


def _write_table(hits: list[Any], title: str, env: Environment) -> int:
    from rich.cells import cell_len

    from symfonic_cli import render

    cells = [[render.cell(h.key), str(h.index), render.escape_inline(h.role), render.cell(render.shown_time(h.timestamp, env))] for h in hits]
    widths = [max([cell_len(HEADERS[i])] + [cell_len(c[i]) for c in cells]) for i in range(4)]
    width = render.console(env).width
    room = width - sum(widths) - 3 * 4  # the frame: " │ " between five columns
    rows = [c + [h.snippet(max(room, len("snippet")))] for c, h in zip(cells, hits)]
    render.write_table(rows, HEADERS, whole=(True, True, True, True, False), title=render.escape_inline(title),
                       environment=env)
    return len(rows)
