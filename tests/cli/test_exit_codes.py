"""Every exit code the tool can end with is in the "Exit codes" table (docs/reference/exit-codes.md), and the table names no
code the tool does not have."""

from __future__ import annotations

import re
from pathlib import Path

from symfonic_cli import errors

README = Path(__file__).resolve().parents[2] / "docs" / "reference" / "exit-codes.md"


def _documented() -> dict[int, str]:
    text = README.read_text(encoding="utf-8").split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    return {int(m.group(1)): m.group(2) for m in re.finditer(r"^\| (\d+) \| (.*) \|$", text, re.M)}


def test_every_exit_code_is_documented_and_no_other():
    codes = {name: value for name, value in vars(errors).items() if name.startswith("EXIT_")}
    documented = _documented()
    assert set(codes.values()) == set(documented), (codes, sorted(documented))
    # each error class ends with a documented code
    for cls in vars(errors).values():
        if isinstance(cls, type) and issubclass(cls, errors.SymfonicError) and isinstance(cls.__dict__.get("exit_code"), int):
            assert cls.exit_code in documented, cls


def test_an_erase_found_written_again_is_not_exit_1():
    # Data (an application writing the thread after the erase committed) never ends with exit 1.
    assert errors.EXIT_WRITTEN_AGAIN not in (errors.EXIT_UNEXPECTED, errors.EXIT_STORE)
    assert "thread erase" in _documented()[errors.EXIT_WRITTEN_AGAIN]


def _paragraphs() -> list[tuple[str, str]]:
    """Every "Exit codes:" paragraph of a command's reference page, joined into one line."""
    found = []
    for page in sorted(README.parent.glob("*.md")):
        for block in page.read_text(encoding="utf-8").split("\n\n"):
            if block.startswith("Exit codes:"):
                found.append((page.name, " ".join(block.split())))
    return found


def test_every_commands_page_names_the_codes_the_table_gives():
    """A page's own list of exit codes agrees with the table: no code the table lacks, never 1
    (unexpected), and an erase whose verification found rows is the table's written-again code."""
    documented = _documented()
    paragraphs = _paragraphs()
    assert {name for name, _ in paragraphs} >= {"erase.md", "storage.md"}
    for name, text in paragraphs:
        for clause in re.split(r"; (?=\d+ (?:when|for|if)\b)", text.removeprefix("Exit codes: ")):
            code = int(re.match(r"(\d+)", clause).group(1))
            assert code in documented and code != errors.EXIT_UNEXPECTED, (name, clause)
            if "verification found" in clause:
                assert code == errors.EXIT_WRITTEN_AGAIN, (name, clause)
    erase = dict(paragraphs)["erase.md"]
    assert f"{errors.EXIT_WRITTEN_AGAIN} when verification found rows" in erase
