"""docs/python-api.md: every ```python block runs, in order, in one namespace (its asserts are the test)."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "python-api.md"


def test_the_examples_run():
    blocks = re.findall(r"^```python\n(.*?)^```", DOC.read_text(encoding="utf-8"), flags=re.S | re.M)
    assert len(blocks) >= 5
    namespace: dict = {}
    for i, block in enumerate(blocks):
        exec(compile(block, f"{DOC.name} block {i + 1}", "exec"), namespace)
    assert namespace["receipt"]["summary"]["erased"] == 1
