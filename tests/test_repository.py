"""The repository stands alone: a clone with nothing beside it collects its whole test
suite, and nothing in it points outside itself."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
OUTSIDE = "../" + "shared"  # spelled in two parts so this file does not match itself


def git(*args: str, cwd: Path) -> str:
    # CI runs as root on a checkout it may not own: trust this one repository only.
    cmd = ["git", "-c", f"safe.directory={ROOT}", *args]
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{' '.join(cmd)} failed:\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """The committed HEAD of this repository, cloned into an empty folder."""
    where = tmp_path_factory.mktemp("alone") / "skymo"
    git("clone", "--quiet", "--no-hardlinks", str(ROOT), str(where), cwd=ROOT)
    assert sorted(p.name for p in where.parent.iterdir()) == ["skymo"]
    return where


def test_a_fresh_clone_collects_the_whole_suite(clone):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_ADDOPTS")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-3000:]
    assert not re.search(r"^ERROR|\d+ errors?\b", out, re.MULTILINE), out[-3000:]
    collected = re.search(r"^(\d+) tests? collected", out, re.MULTILINE)
    assert collected and int(collected.group(1)) > 0, out[-3000:]
    # the conformance records were found, so their replay tests exist
    assert "test_conformance_record_replays[" in out


def test_no_tracked_file_points_outside_the_repository(clone):
    files = git("ls-files", cwd=clone).split("\n")
    offenders = [
        name
        for name in files
        if name and (clone / name).is_file() and OUTSIDE in _text(clone / name)
    ]
    assert offenders == []


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return ""
