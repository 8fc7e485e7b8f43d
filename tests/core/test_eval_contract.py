"""The seeds' evaluation contract (spec/core.md §2, seed 000): when errors surface, when inputs
are read, what consuming a deferred result does, reader shard padding, `next_epoch(compile=)`.

* An operator's own checks (argument values, layouts, windows, image headers, shape mismatches)
  raise at the call in sync_cpu/sync_full and at the first consumption in eager/deferred, with
  the same class, DALI's wrapping message and the original as `__cause__`; errors in how the op
  was called (argument types and conversions) raise at the call in every mode.
* External data (NumPy, torch, DLPack, and Tensors/Batches wrapping them) is read before the
  call returns, in every mode.
* In deferred mode, reading `.shape` runs the call.
"""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest
import torch

import ndd_triton as ndd
from ndd_triton import EvalMode

ASYNC = (EvalMode.eager, EvalMode.deferred)
SYNC = (EvalMode.sync_cpu, EvalMode.sync_full)
WRAP = {EvalMode.eager: "An error happened during asynchronous execution",
        EvalMode.deferred: "An error happened during deferred evaluation"}
BACKENDS = ("cpu", "gpu")
IMAGES = os.path.join(os.path.dirname(ndd.__file__), "data", "images")


def _image(device: str = "cpu") -> ndd.Tensor:
    arr = np.arange(6 * 5 * 3, dtype=np.uint8).reshape(6, 5, 3)
    return ndd.tensor(arr, layout="HWC", device=device)


def _crop_out_of_bounds(device: str):
    return ndd.crop(_image(device), crop=(40, 40), out_of_bounds_policy="error")


def _bad_layout(device: str):
    return ndd.flip(ndd.tensor(np.zeros((4, 4, 3), np.uint8), layout="XYZ", device=device))


def _shape_mismatch(device: str):
    a = ndd.batch([np.zeros((2, 3), np.float32)], device=device)
    b = ndd.batch([np.zeros((4, 5), np.float32)], device=device)
    return a + b


def _garbage_header(device: str):
    return ndd.decoders.image(ndd.tensor(np.frombuffer(b"not an image at all", np.uint8)),
                              device=device)


# (name, call, exception class, text of the original message)
OPERATOR_ERRORS = [
    ("crop window", _crop_out_of_bounds, RuntimeError, "out of bounds"),
    ("layout string", _bad_layout, ValueError, "layout 'XYZ'"),
    ("shape mismatch", _shape_mismatch, ValueError, "broadcast"),
    ("image header", _garbage_header, RuntimeError, "sample 0"),
]

CONSUMERS = {
    "evaluate": lambda r: r.evaluate(),
    "shape": lambda r: r.shape,
    "asarray": lambda r: np.asarray(r.cpu() if isinstance(r, ndd.Tensor) else r.select(0).cpu()),
    "torch": lambda r: r.torch(),
    "dlpack": lambda r: torch.from_dlpack(r if isinstance(r, ndd.Tensor) else r.select(0)),
    "iteration": lambda r: list(r),
    "repr": repr,
    "dtype": lambda r: r.dtype,
}


def _check_wrapped(info: pytest.ExceptionInfo, mode: EvalMode, kind: type, text: str) -> None:
    err = info.value
    assert type(err) is kind or isinstance(err, kind)
    assert str(err).startswith(WRAP[mode]), str(err)
    assert text in str(err.__cause__), repr(err.__cause__)
    assert __file__ in str(err)  # the user's call site: file and line of the op call


@pytest.mark.parametrize("device", BACKENDS)
@pytest.mark.parametrize("mode", ASYNC, ids=lambda m: m.name)
@pytest.mark.parametrize(("name", "call", "kind", "text"), OPERATOR_ERRORS,
                         ids=[e[0] for e in OPERATOR_ERRORS])
def test_operator_errors_surface_on_consumption_in_async_modes(name, call, kind, text, mode,
                                                               device):
    with mode:
        result = call(device)  # returns: the error waits for the first consumption
        with pytest.raises(kind) as info:
            result.evaluate()
    _check_wrapped(info, mode, kind, text)


@pytest.mark.parametrize("mode", ASYNC, ids=lambda m: m.name)
@pytest.mark.parametrize("consumer", sorted(CONSUMERS))
def test_every_consumption_raises_the_stored_error(consumer, mode):
    with mode:
        result = _crop_out_of_bounds("cpu")
        with pytest.raises(RuntimeError) as info:
            CONSUMERS[consumer](result)
    _check_wrapped(info, mode, RuntimeError, "out of bounds")


@pytest.mark.parametrize("device", BACKENDS)
@pytest.mark.parametrize("mode", SYNC, ids=lambda m: m.name)
@pytest.mark.parametrize(("name", "call", "kind", "text"), OPERATOR_ERRORS,
                         ids=[e[0] for e in OPERATOR_ERRORS])
def test_operator_errors_raise_at_the_call_in_sync_modes(name, call, kind, text, mode, device):
    with mode, pytest.raises(kind, match=text) as info:
        call(device)
    assert "An error happened" not in str(info.value)


@pytest.mark.parametrize("mode", [*ASYNC, *SYNC], ids=lambda m: m.name)
def test_call_errors_raise_at_the_call_in_every_mode(mode):
    img = _image()
    with mode:
        with pytest.raises(TypeError, match="unexpected keyword"):
            ndd.flip(img, not_an_argument=1)
        with pytest.raises(ValueError, match="horizontal"):
            ndd.flip(img, horizontal="yes")
        with pytest.raises(TypeError, match="horizontal"):
            ndd.flip(img, horizontal=object())
        with pytest.raises(ValueError, match="no layout"):
            ndd.flip(ndd.tensor(np.zeros((2, 3, 4, 5, 6, 7, 8), np.uint8)))


@pytest.mark.parametrize("mode", ASYNC, ids=lambda m: m.name)
def test_a_failed_call_does_not_poison_later_calls(mode):
    with EvalMode.sync_cpu:
        expected = np.asarray(ndd.crop(_image(), crop=(2, 2)))
    with mode:
        bad = _crop_out_of_bounds("cpu")
        good = ndd.crop(_image(), crop=(2, 2))
        downstream = ndd.flip(bad)  # reads the failed result: fails too, when consumed
        assert good.shape == (2, 2, 3)
        np.testing.assert_array_equal(np.asarray(good), expected)
        with pytest.raises(RuntimeError) as info:
            downstream.evaluate()
        assert "out of bounds" in str(info.value)
        again = ndd.crop(_image(), crop=(3, 3)).evaluate()
    assert again.shape == (3, 3, 3)


@pytest.mark.parametrize("mode", ASYNC, ids=lambda m: m.name)
def test_a_corrupt_file_through_a_reader_fails_its_batch_on_consumption(tmp_path, mode):
    with open(os.path.join(IMAGES, "chelsea_small_97x65.jpg"), "rb") as f:
        good = f.read()
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "good.jpg").write_bytes(good)
    (tmp_path / "a" / "bad.jpg").write_bytes(b"garbage, not a JPEG")
    reader = ndd.readers.File(file_root=str(tmp_path))
    with mode:
        for jpegs, _ in reader.next_epoch(batch_size=2):
            images = ndd.decoders.image(jpegs)  # returns
            with pytest.raises(RuntimeError) as info:
                images.evaluate()
            assert "bad.jpg" in str(info.value.__cause__)
        later = ndd.decoders.image(ndd.tensor(np.frombuffer(good, np.uint8)))
        assert later.shape == (65, 97, 3)


# ---- external data is read before the call returns ---------------------------------------
def _wrappers():
    return {
        "numpy": lambda arr: arr,
        "torch": torch.from_numpy,
        "as_tensor": lambda arr: ndd.as_tensor(arr, layout="HWC"),
        "as_batch": lambda arr: ndd.as_batch([arr], layout="HWC"),
        "dlpack": lambda arr: ndd.as_tensor(torch.from_numpy(arr), layout="HWC"),
    }


@pytest.mark.parametrize("device", BACKENDS)
@pytest.mark.parametrize("mode", [*ASYNC, *SYNC], ids=lambda m: m.name)
@pytest.mark.parametrize("wrap", sorted(_wrappers()))
def test_external_data_is_read_before_the_call_returns(wrap, mode, device):
    arr = np.arange(4 * 5 * 3, dtype=np.uint8).reshape(4, 5, 3)
    expected = arr[:, ::-1].copy()
    data = _wrappers()[wrap](arr)
    with mode:
        if device == "gpu" and wrap in ("numpy", "torch"):
            result = ndd.flip(ndd.as_tensor(data, layout="HWC").gpu())
            expected_after = expected  # .gpu() copied it at the call
        else:
            result = ndd.flip(data, device=device) if wrap in ("numpy", "torch") else \
                ndd.flip(data.gpu() if device == "gpu" else data)
            expected_after = expected
        arr[...] = 0  # the caller overwrites its array after the call
        got = result.cpu()
        got = np.asarray(got if isinstance(got, ndd.Tensor) else got.select(0))
    np.testing.assert_array_equal(got, expected_after)


def test_wrapping_without_a_copy_marks_external_and_a_copy_does_not():
    arr = np.zeros((2, 2), np.uint8)
    assert ndd.as_tensor(arr)._external
    assert not ndd.tensor(arr)._external
    assert ndd.as_batch([arr])._storage_or_raise().external
    assert not ndd.batch([arr])._storage_or_raise().external
    assert ndd.Tensor(arr)._external
    assert not ndd.as_tensor(arr, dtype=ndd.float32)._external  # converted: a copy


# ---- deferred mode: consuming runs the call -------------------------------------------------
def test_reading_shape_in_deferred_mode_runs_the_call():
    source = ndd.tensor(np.arange(12, dtype=np.uint8).reshape(2, 2, 3), layout="HWC")
    view = source.torch()  # the caller can write into ndd memory through torch
    with EvalMode.deferred:
        result = ndd.flip(source)
        assert result.shape == (2, 2, 3)  # a consumption: the flip runs now
        view[...] = 0
        got = np.asarray(result)
    np.testing.assert_array_equal(got, np.arange(12, dtype=np.uint8).reshape(2, 2, 3)[:, ::-1])


def test_reading_batch_shape_in_deferred_mode_runs_the_call():
    source = ndd.batch([np.ones((2, 2), np.float32), np.ones((1, 3), np.float32)])
    with EvalMode.deferred:
        result = source + 1
        inv = result._producer.inv
        assert not inv.done
        assert result.shape == [(2, 2), (1, 3)]
        assert inv.done


def test_eager_shape_answers_from_inference():
    source = ndd.batch([np.ones((2, 2), np.float32)])
    result = source * 2
    assert result.shape == [(2, 2)]


# ---- modes are per thread -----------------------------------------------------------------
def test_modes_do_not_leak_between_threads_and_nest():
    seen: dict[str, object] = {}
    entered, release = threading.Event(), threading.Event()

    def other() -> None:
        entered.wait()
        seen["mode"] = EvalMode.current()
        result = _crop_out_of_bounds("cpu")  # eager on this thread: returns
        seen["returned"] = True
        try:
            result.evaluate()
        except RuntimeError as e:
            seen["error"] = str(e)
        release.set()

    t = threading.Thread(target=other)
    t.start()
    with EvalMode.sync_cpu:
        entered.set()
        release.wait(60)
        with EvalMode.deferred:
            assert EvalMode.current() is EvalMode.deferred
        assert EvalMode.current() is EvalMode.sync_cpu
        with pytest.raises(RuntimeError, match="out of bounds"):
            _crop_out_of_bounds("cpu")
    t.join(60)
    assert seen["mode"] is EvalMode.eager and seen["returned"]
    assert str(seen["error"]).startswith(WRAP[EvalMode.eager])


# ---- readers: shard padding and next_epoch(compile=) ---------------------------------------
def _files(tmp_path, count):
    (tmp_path / "c").mkdir()
    for i in range(count):
        (tmp_path / "c" / f"{i:02d}.jpg").write_bytes(bytes([i]))
    return str(tmp_path)


@pytest.mark.parametrize("stick", [False, True])
def test_pad_last_batch_gives_every_shard_the_same_number_of_batches(tmp_path, stick):
    # DALI 2.4: 14 files in 5 shards (sizes 2, 3, 3, 3, 3) at batch 2 give every shard 2 batches
    root = _files(tmp_path, 14)
    for shard in range(5):
        reader = ndd.readers.File(file_root=root, num_shards=5, shard_id=shard,
                                  pad_last_batch=True, stick_to_shard=stick)
        for epoch in range(2):
            batches = [[int(np.asarray(s)[0]) for s in files]
                       for files, _ in reader.next_epoch(batch_size=2)]
            read = shard if stick else (shard + epoch) % 5
            begin, end = read * 14 // 5, (read + 1) * 14 // 5
            expected = list(range(begin, end)) + [end - 1] * (4 - (end - begin))
            assert batches == [expected[:2], expected[2:]], (shard, epoch)


def test_pad_last_batch_metadata_counts_the_largest_shard(tmp_path):
    reader = ndd.readers.File(file_root=_files(tmp_path, 14), num_shards=5, shard_id=0,
                              pad_last_batch=True)
    assert reader.get_metadata()["epoch_size_padded"] == 15


def test_next_epoch_accepts_compile_and_refuses_it_with_checkpointing(tmp_path):
    root = _files(tmp_path, 4)
    reader = ndd.readers.File(file_root=root)
    with pytest.warns(UserWarning, match="no operators were called"):  # nothing to compile
        assert sum(1 for _ in reader.next_epoch(batch_size=2, compile=True)) == 2
    checkpointed = ndd.readers.File(file_root=root, enable_checkpointing=True)
    for keyword in ("compile", "capture"):
        with pytest.raises(NotImplementedError, match="not supported in capture mode"):
            checkpointed.next_epoch(batch_size=2, **{keyword: True})
