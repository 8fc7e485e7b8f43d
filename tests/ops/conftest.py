"""Fixtures shared by the op tests."""

import pytest
from _decoder_data import encoded_files


@pytest.fixture(scope="module")
def files():
    """Encoded test images of every decoder format (`_decoder_data.encoded_files`)."""
    return encoded_files()
