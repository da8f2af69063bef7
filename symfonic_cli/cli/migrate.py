"""``symfonic migrate``: copy threads between stores, verbatim and verified."""

from __future__ import annotations

from typing import Any

import typer

from symfonic_cli.api.params import MIGRATE
from symfonic_cli.cli.declared import command, spliced
from symfonic_cli.cli.options import FormatOpt, command_front
from symfonic_cli.vocabulary import GROUP_HELP
from symfonic_cli.environment import Environment

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.api.runs import MigrateResult

COLUMNS = ("thread", "status", "checkpoints_copied", "checkpoints_skipped", "writes_copied", "writes_skipped", "verified", "message")


def _command(fmt: str | None, **given: Any) -> None:
    # The help: vocabulary.GROUP_HELP["migrate"] (the root's help says the same).
    from symfonic_cli.api import front as api
    from symfonic_cli.cli.migrate_report import MigrateTextReport

    front = command_front(fmt, report=MigrateTextReport)  # on stderr as it goes: warnings, the progress bar
    result = api.migrate(front, given)
    _write(result, front.report.fmt, front.environment)
    result.check()


def _write(result: MigrateResult, out_format: str, env: Environment) -> None:
    from symfonic_cli import render

    out = env.stdout
    if render.is_data(out_format):  # the format's writer takes the document or its records
        render.write_result(result.document(), result.records(), out_format, out)
        return
    records = result.records()
    render.write_records(records, fmt=out_format, columns=COLUMNS, title=f"{result.source} -> {result.target}", environment=env)
    t = result.totals
    if result.mode == "dry-run":  # what a copy would do, in the rows' own words (copy, skip), never "copied"
        line = (f"dry run, nothing written: threads {t['threads']}, would copy {t['copied']}, skip {t['skipped']}, "
                f"conflict {t['conflict']}, fail {t['failed']}; checkpoints to copy {t['checkpoints_copied']}, "
                f"writes to copy {t['writes_copied']}")
    else:
        line = ", ".join(f"{k} {v}" for k, v in t.items())
    if result.serializer:
        line += f"; target: {result.serializer}"
    if out_format == "table":
        render.console(env).print(line)
    else:
        out.write(f"# {line}\n")


def register(app: typer.Typer) -> None:
    command(app, "migrate", spliced(MIGRATE, "to_plaintext", ("fmt", FormatOpt, None)), help=GROUP_HELP["migrate"])(_command)
