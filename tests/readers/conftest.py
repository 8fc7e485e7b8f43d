"""Fixtures for reader tests: real files written into tmp_path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from reader_files import write_files


@pytest.fixture
def class_tree(tmp_path: Path) -> Path:
    """file_root with two classes (b before c; an empty 'a' folder would be class 0)."""
    write_files(tmp_path, ["c/z1.jpg", "c/z0.png", "b/x1.jpg", "b/x0.jpg", "b/sub/y.jpg",
                           "b/notes.txt", "c/UPPER.JPG"])
    (tmp_path / "top.jpg").write_bytes(b"ignored: not in a class folder")
    return tmp_path


@pytest.fixture
def flat_files(tmp_path: Path):
    """A factory: n files 'f<i>.bin' whose label is their index, as a `files=` argument."""

    def make(n: int) -> dict:
        names = write_files(tmp_path, [f"f{i:02d}.bin" for i in range(n)])
        return {"files": [os.path.join(tmp_path, x) for x in names]}

    return make
