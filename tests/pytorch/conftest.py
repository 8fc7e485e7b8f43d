"""Shared fixtures of the PyTorch integration tests."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loader_job  # a helper script beside the tests, also run as a subprocess


@pytest.fixture(scope="module")
def photos(tmp_path_factory):
    """A folder of 7 small labelled JPEGs (loader_job.make_dataset), one per test module."""
    root = str(tmp_path_factory.mktemp("photos"))
    loader_job.make_dataset(root, count=7)
    return root
