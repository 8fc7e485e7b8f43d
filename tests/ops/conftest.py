"""Fixtures shared by the op tests."""

import pytest
from _decoder_data import encoded_files


@pytest.fixture(scope="module")
def files():
    """Encoded test images of every decoder format (`_decoder_data.encoded_files`)."""
    return encoded_files()


@pytest.fixture
def small_tiles(monkeypatch):
    """Row-tiled GPU kernels with blocks of at most 8 elements and 32-element programs, so
    small samples span several tiles along their rows and across rows."""
    from ndd_triton.kernels.gpu import _tables

    monkeypatch.setattr(_tables, "ROW_TILE_ELEMENTS", 32)
    monkeypatch.setattr(_tables, "ROW_TILE_MAX_BLOCK", 8)
