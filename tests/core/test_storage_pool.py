"""Host batches come from a pool of recycled buffers: a buffer is handed out again only once
nothing refers to it any more (NumPy views, torch tensors, Tensor/Batch objects, DLPack)."""

from __future__ import annotations

import gc

import numpy as np
import pytest
import torch

import ndd_triton as ndd
from ndd_triton.core import storage as _storage
from ndd_triton.core.device import Device
from ndd_triton.core.storage import BatchStorage

UNIFORM = [(256, 256, 3)] * 8  # 1.5 MB of uint8: pooled
RAGGED = [(256 + 16 * i, 256, 3) for i in range(8)]


def _address(storage: BatchStorage) -> int:
    host = storage.host_buffer()
    assert host is not None
    return int(host.__array_interface__["data"][0])


def _holders(storage: BatchStorage) -> dict[str, object]:
    batch = ndd.Batch._concrete(storage, ndd.uint8, "HWC")
    return {
        "numpy view": storage.host_views()[1] if storage._shape_rows else storage._dense_np[1],
        "torch sample": storage.samples[2],
        "torch buffer": storage.buffer,
        "batch": batch,
        "tensor": batch.select(3),
        "torch of a sample": batch.select(0).torch(),
        "dlpack": torch.utils.dlpack.to_dlpack(storage.samples[4]),
    }


@pytest.mark.skipif(not _storage._CAN_POOL, reason="needs CPython reference counts")
@pytest.mark.parametrize("shapes", [UNIFORM, RAGGED], ids=["uniform", "ragged"])
@pytest.mark.parametrize("kind", ["numpy view", "torch sample", "torch buffer", "batch",
                                  "tensor", "torch of a sample", "dlpack"])  # fmt: skip
def test_a_buffer_is_reused_only_when_nothing_refers_to_it(shapes, kind):
    _storage._pool.clear()
    first = BatchStorage.allocate(shapes, torch.uint8, Device.CPU)
    address = _address(first)
    held = _holders(first)[kind]
    first.host_buffer()[:] = 7
    del first
    gc.collect()
    second = BatchStorage.allocate(shapes, torch.uint8, Device.CPU)
    second_address = _address(second)
    assert second_address != address, f"reused while a {kind} was alive"
    second.host_buffer()[:] = 9  # must not show through what is held
    if kind == "numpy view":
        assert np.all(held == 7)
    elif kind in ("torch sample", "torch buffer", "torch of a sample"):
        assert bool((held == 7).all())
    del held, second
    gc.collect()
    third = BatchStorage.allocate(shapes, torch.uint8, Device.CPU)
    assert _address(third) in {address, second_address}  # both free now: one is reused
    assert len(_storage._pool) == 2


@pytest.mark.skipif(not _storage._CAN_POOL, reason="needs CPython reference counts")
def test_a_free_buffer_is_reused():
    _storage._pool.clear()
    first = BatchStorage.allocate(RAGGED, torch.uint8, Device.CPU)
    address = _address(first)
    del first
    assert _address(BatchStorage.allocate(RAGGED[:-1], torch.uint8, Device.CPU)) == address


def test_host_batches_make_their_torch_views_on_first_use():
    storage = BatchStorage.allocate(RAGGED, torch.float32, Device.CPU)
    assert storage._buffer is None and storage.dtype == torch.float32
    views = storage.host_views()
    views[1][:] = 1.5
    assert storage._buffer is None  # NumPy all along
    assert storage.samples[1].dtype == torch.float32 and float(storage.samples[1][0, 0, 0]) == 1.5
    dense = BatchStorage.allocate(UNIFORM, torch.int16, Device.CPU)
    assert dense._dense_t is None and dense.dtype == torch.int16
    assert dense.dense().shape == (8, 256, 256, 3)
