"""Helpers for reader tests: small datasets written by the tests themselves."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def content(name: str) -> bytes:
    """Distinct, ragged file content derived from the file's relative path."""
    return (name.encode() + b"|") * (1 + len(name) % 3)


def write_files(root: Path, names: list[str]) -> list[str]:
    """Write each relative path under root with `content(name)`; returns the names."""
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content(name))
    return names


def read_labels(label_batch) -> list[int]:
    """Labels of a Batch of shape-(1,) i32 samples as a Python list."""
    return [int(np.asarray(t)[0]) for t in label_batch]


def read_data(data_batch) -> list[bytes]:
    """The bytes of every sample of a u8 Batch."""
    return [bytes(np.asarray(t)) for t in data_batch]
