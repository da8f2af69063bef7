"""Issue #37, item 8: ``man symfonic`` works after ``pip install`` in a virtual environment: the
wheel installs the page under ``<prefix>/share/man/man1``, where man finds it from ``PATH``
(``<venv>/bin`` -> ``<venv>/share/man``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from tests.support.markers import require

REPO = Path(__file__).resolve().parents[2]


def test_the_wheel_puts_the_man_page_where_man_finds_it(tmp_path):
    require("slow")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path / "wheel"), str(REPO)],
                   check=True, capture_output=True, timeout=600)
    (wheel,) = (tmp_path / "wheel").glob("symfonic-*.whl")
    page = (REPO / "symfonic_cli" / "data" / "symfonic.1").read_bytes()
    with zipfile.ZipFile(wheel) as z:
        shared = [n for n in z.namelist() if n.endswith(".data/data/share/man/man1/symfonic.1")]
        assert len(shared) == 1 and z.read(shared[0]) == page
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q", "--no-deps", str(wheel)],
                   check=True, capture_output=True, timeout=600)
    installed = venv / "share" / "man" / "man1" / "symfonic.1"
    assert installed.read_bytes() == page
    man = shutil.which("man")
    if man is not None:  # where man is installed: it finds the page from PATH alone
        env = {k: v for k, v in os.environ.items() if k != "MANPATH"}
        env["PATH"] = f"{venv / 'bin'}{os.pathsep}/usr/bin{os.pathsep}/bin"
        found = subprocess.run([man, "-w", "symfonic"], capture_output=True, text=True, env=env, timeout=60)
        assert found.returncode == 0 and Path(found.stdout.strip()) == installed, found
