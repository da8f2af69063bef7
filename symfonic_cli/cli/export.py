"""``symfonic thread export``: a bundle of threads' transcripts and a manifest (GDPR access and
portability). Adds its command to the ``thread`` group (``cli/thread.py``); its options are
export's declared parameters (export/params.py, through api/params.py), the run is the API's
(api/front.py)."""

from __future__ import annotations

from typing import Any

from symfonic_cli.api.params import EXPORT
from symfonic_cli.cli.declared import command, spliced
from symfonic_cli.cli.options import FormatOpt, KeyArg, StoreOpt, command_front, with_key
from symfonic_cli.cli.thread import app

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.api.front import Front


@command(app, "export", [("key", KeyArg, None), ("store", StoreOpt, None),
                         *spliced(EXPORT, "missing_ok", ("fmt", FormatOpt, None))])
def export(key: str | None, store: str | None, fmt: str | None, **given: Any) -> None:
    """Export threads' transcripts to a bundle with a manifest (read-only; never overwrites without --force).

    Each thread becomes transcript/<safe name>.json, exactly what transcript show --format json
    prints, and retained/<safe name>.json the messages older checkpoints still hold that the current
    state does not (compaction removed them; --current-only leaves them out); manifest.json maps the
    file names back to the keys, with row and retained-message counts, activity and SHA-256 of each file. A requested key that names no thread is not-found (exit 3, nothing written).
    """
    from symfonic_cli.api import front as api

    given["thread"] = with_key(key, given["thread"])
    front = command_front(fmt)
    _written(front, api.export(front, store, given))  # warnings, not-found keys, progress: on stderr


def _written(front: Front, result: Any) -> None:
    """What was written (an ExportResult): one line for a reader, the document for json and jsonl."""
    from symfonic_cli.render import escape_inline as esc
    from symfonic_cli.render.writers import is_data, write_document

    out, out_format = front.environment.stdout, front.report.fmt
    if is_data(out_format):
        write_document(result.document(), out_format, out)
    else:
        from symfonic_cli.render.fit import Whole, fit, width_of

        missing = result.not_found
        pieces = ["exported", Whole(f"{result.threads} thread(s)"), "to", Whole(esc(result.output) + (";" if missing else ""))]
        if missing:
            pieces.append(Whole(f"{len(missing)} not found"))
        out.write(fit(pieces, width_of(out)) + "\n")
    out.flush()
