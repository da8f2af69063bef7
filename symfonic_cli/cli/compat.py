"""``symfonic compat report|show``: the compatibility envelopes of a store, read-only.

Only checkpoint metadata is read; nothing is ever stamped, repaired or moved.
"""

from __future__ import annotations

from typing import Annotated, Any, Optional

import typer

from symfonic_cli.cli.common import MAX_FORMAT_VERSION, check_format, environment
from symfonic_cli.cli.options import (
    KeyArg,
    FormatOpt,
    SessionOpt,
    StoreOpt,
    SubTenantOpt,
    TenantOpt,
    ThreadOpt,
    with_key,
)
from symfonic_cli.cli import optionspec
from symfonic_cli.cli.compat_report import DEFAULT_FAIL_ON_TEXT, DEFAULT_GRACE, _envelope_key
from symfonic_cli.cli.options import option_info, typer_options
from symfonic_cli.api.compat import CHECKPOINT_COLUMNS, CURRENT_FORMAT, DEFAULT_ENVELOPE_KEY
from symfonic_cli.vocabulary import GROUP_HELP
from symfonic_cli.cli.common import one_thread as single_thread_key

app = typer.Typer(help=GROUP_HELP["compat"], no_args_is_help=True)

EnvelopeKeyOpt = Annotated[str, option_info(optionspec.COMPAT_REPORT["envelope_key"])]
CurrentFormatOpt = Annotated[
    int, typer.Option("--current-format", min=1, max=MAX_FORMAT_VERSION, help="Newest envelope format_version the running release understands (1 to 1000000).")
]
# compat report's options, from the table the quick route (fast.py) parses too.
REPORT = typer_options(optionspec.COMPAT_REPORT)


def register(app_: typer.Typer) -> None:
    app_.add_typer(app, name="compat")


@app.command("report")
def report(
    key: KeyArg = None,
    store: StoreOpt = None,
    thread: ThreadOpt = None,
    tenant: TenantOpt = None,
    sub_tenant: SubTenantOpt = None,
    session: SessionOpt = None,
    by_thread: Annotated[bool, REPORT["by_thread"]] = False,
    grace: Annotated[str, REPORT["grace"]] = DEFAULT_GRACE,
    current_format: CurrentFormatOpt = CURRENT_FORMAT,
    envelope_key: EnvelopeKeyOpt = DEFAULT_ENVELOPE_KEY,
    fmt: Annotated[Optional[str], REPORT["fmt"]] = None,
    fail_on: Annotated[str, REPORT["fail_on"]] = DEFAULT_FAIL_ON_TEXT,
) -> None:
    """Store-wide (default), one thread (--thread / --tenant --session) or every thread (--by-thread)."""
    from symfonic_cli.cli.compat_report import compat_report

    compat_report(store, with_key(key, thread), tenant, sub_tenant, session, by_thread, grace, current_format, envelope_key,
                  fmt, fail_on, environment=environment())


@app.command("show")
def show(
    key: KeyArg = None,
    store: StoreOpt = None,
    thread: ThreadOpt = None,
    tenant: TenantOpt = None,
    sub_tenant: SubTenantOpt = None,
    session: SessionOpt = None,
    checkpoint: Annotated[Optional[str], typer.Option("--checkpoint", help="Show this checkpoint in full.")] = None,
    current_format: CurrentFormatOpt = CURRENT_FORMAT,
    envelope_key: EnvelopeKeyOpt = DEFAULT_ENVELOPE_KEY,
    fmt: FormatOpt = None,
) -> None:
    """Every checkpoint of a thread, newest first, with its envelope verdict (or one in full)."""
    thread = with_key(key, thread)
    from symfonic_cli import render
    from symfonic_cli.cli.common import open_reading

    out_format = check_format(fmt, env=environment())
    key = _envelope_key(envelope_key)
    tkey = single_thread_key(thread, tenant, sub_tenant, session)
    env = environment()
    out = env.stdout
    with open_reading(store, env) as st:
        found = st.compat_checkpoints(tkey, envelope_key=key, current_format=current_format, checkpoint=checkpoint)
        if checkpoint is not None:
            rec = found.to_json(full=True)
            if render.is_data(out_format):
                render.write_document(rec, out_format, out)
            else:
                render.write_pairs([(k, _cell(v)) for k, v in rec.items()], fmt=out_format, title=tkey, environment=env)
            return
        render.write_records((v.to_json() for v in found), fmt=out_format, columns=CHECKPOINT_COLUMNS, title=tkey, environment=env)


def _cell(value: Any) -> Any:
    if isinstance(value, (dict, list)):
        from symfonic_cli.render import json_dumps

        return json_dumps(value)
    return value
