"""The store's screens (``c`` the compat report, ``u`` store usage), ``?`` help and ``x`` (the CLI
command that prints the current view)."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from symfonic_cli.browse.base import TextScreen
from symfonic_cli.browse.text import inline, pairs, plain


class CompatScreen(TextScreen):
    def heading(self) -> str:
        return "compat report"

    def cli_words(self) -> list[str]:
        return ["compat", "report", "--store", self.browse.store_word()]

    def load(self) -> None:
        self.read(self.source.compat, self._shown, busy="reading every checkpoint's envelope ...")

    def _shown(self, report: Any) -> None:
        doc = report.to_json()
        out = pairs([("checkpoints", doc["checkpoints"]), ("threads", doc["threads"]),
                     *((f"finding {name}", n) for name, n in doc["findings"].items()),
                     *((f"verdict {name}", v) for name, v in doc["verdict"].items())], width=30)
        out.append("\n\nwriters", style="bold")
        for w in doc["by_writer_line"]:
            out.append(f"\n  {inline(w['writer_line']):<12} format {inline(w['format_version']):<4} {w['checkpoints']:>8} checkpoints")
        out.append("\n\npackage versions", style="bold")
        for v in doc["package_versions"]:
            out.append(f"\n  {inline(v['package_version'] or 'none'):<12} {v['checkpoints']:>8} checkpoints {v['threads']:>6} threads")
        for name, found in doc["finding_threads"].items():
            if found.get("threads"):
                out.append(f"\n\n{name}: ", style="bold")
                out.append(f"{found['threads']} threads, first {', '.join(map(inline, found['first_threads']))}")
        if doc.get("suggestion"):
            out.append("\n\n")
            out.append(inline(doc["suggestion"]))
        self.show(out, "read-only; compat report --fail-on gates a deploy (x shows the command)")


class UsageScreen(TextScreen):
    def heading(self) -> str:
        return "store usage"

    def cli_words(self) -> list[str]:
        return ["store", "usage", "--store", self.browse.store_word()]

    def load(self) -> None:
        self.read(self.source.usage, self._shown, busy="measuring the store ...")

    def _shown(self, usage: Any) -> None:
        from symfonic_cli.render import human_size

        doc = usage.to_json()
        rows: list[tuple[str, Any]] = [("kind", doc["store_kind"])]
        for part in ("checkpoints", "writes", "blobs"):
            if doc.get(part):
                rows.append((part, f"{doc[part]['count']} rows, {human_size(doc[part]['bytes'])}"))
        for name, value in (doc.get("files") or {}).items():
            rows.append((name.replace("_", " "), human_size(value) if name.endswith("bytes") else value))
        r = doc["reclaimable"]
        rows.append((f"prune keep {r['keep']}", f"{r['checkpoints']} checkpoints, {r['writes']} writes, {human_size(r['bytes'])}"))
        out = pairs(rows, width=20)
        out.append("\n\nlargest threads", style="bold")
        for t in doc["largest_threads"]:
            out.append(f"\n  {inline(t['key'])}  {human_size(t['bytes'])}, {t['checkpoints']} checkpoints")
        out.append("\n\nchannels", style="bold")
        for c in doc["channels"]:
            out.append(f"\n  {inline(c['channel'])} ({inline(c['table'])}) {c['rows']} rows, {human_size(c['bytes'])}")
        for note in doc.get("notes") or ():
            out.append("\n\n")
            out.append(inline(note), style="dim")
        self.show(out, "read-only: x shows the command; thread prune --dry-run plans a prune")


class HelpScreen(TextScreen):
    """``?``: every key of the screen it was opened on, and the ones that work everywhere."""

    def __init__(self, under: Any) -> None:
        super().__init__()
        self.under = under

    def heading(self) -> str:
        return "keys"

    def load(self) -> None:
        out = Text(end="")
        seen: set[str] = set()
        for title, holder in (("here", self.under), ("lists", None), ("everywhere", self.app)):
            if holder is None:
                from symfonic_cli.browse.itemlist import ItemList

                bindings = ItemList.BINDINGS
            else:
                bindings = type(holder).BINDINGS
            out.append(f"{title}\n", style="bold")
            for b in bindings:
                if not isinstance(b, Binding) or b.description in seen:
                    continue
                seen.add(b.description)
                keys = self.app.get_key_display(b) if holder is not None else b.key
                out.append(f"  {inline(keys):<14} {inline(b.description)}\n")
            out.append("\n")
        out.append("The browser never changes the store: for erase, export and prune, x shows the command.", style="dim")
        self.show(out)


class CommandScreen(ModalScreen[None]):
    """``x``: the command that prints what this screen shows (for a ticket or a script)."""

    BINDINGS = [Binding("escape,enter,x", "close", "close"), Binding("y", "copy", "copy the command", id="copy")]
    DEFAULT_CSS = """
    CommandScreen { align: center middle; }
    CommandScreen > Vertical { width: 90%; height: auto; border: round $primary; background: $surface; padding: 0 1; }
    """

    def __init__(self, line: str) -> None:
        super().__init__()
        self.line = line

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(plain(("the command that prints this view (y copies it, Esc closes)", "bold")))
            yield Static(Text(self.line), id="command")

    def action_close(self) -> None:
        self.dismiss(None)

    def action_copy(self) -> None:
        self.app.copy_to_clipboard(self.line)
        self.app.notify("command copied", markup=False)
