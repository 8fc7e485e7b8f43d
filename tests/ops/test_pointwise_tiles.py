"""Stream tiling and broadcast geometry of the pointwise GPU kernels (`kernels/gpu/_stream.py`,
`_broadcast.py`): exact int32 division by invariant integers, axis collapsing, tile coverage, and
the kernels on samples spanning several tiles, starting mid-tile, and packed unlike the output
(per-sample deltas), each against an independent NumPy reference."""

import os
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from _check import assert_close, check_op, samples_of
from test_cast import ref_convert
from test_color import ref_brightness_contrast, ref_matrix
from test_grid_mask import grid_ref
from test_normalize import ref_normalize
from test_one_hot import ref_one_hot

import ndd_triton as ndd
from ndd_triton.core.dtype import DType
from ndd_triton.kernels.gpu import _elementwise
from ndd_triton.kernels.gpu._broadcast import collapse, contiguous_strides, magic_numbers
from ndd_triton.kernels.gpu._stream import plan_tiles
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu.cast import _launch_cast
from ndd_triton.kernels.gpu.color import launch_affine

# u8 tiles are 8192 elements, f32 tiles 4096: these samples span 2-3 tiles and, packed one
# after another, start in the middle of a tile
U8_SHAPES = [(50, 61, 3), (7, 13, 3), (1, 1, 3), (91, 47, 3)]
F32_SHAPES = [(37, 41, 3), (7, 13, 3), (1, 1, 3), (29, 53, 3)]


def _rng_images(shapes, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return [(rng.standard_normal(s) * 100).astype(dtype) for s in shapes]
    return [rng.integers(0, 256, s).astype(dtype) for s in shapes]


# ---- host geometry -------------------------------------------------------------------------
def test_magic_numbers_divide_exactly():
    rng = np.random.default_rng(0)
    divisors = np.concatenate(
        [
            np.arange(1, 300),
            2 ** np.arange(31),
            2 ** np.arange(1, 31) - 1,
            2 ** np.arange(1, 31) + 1,
            rng.integers(1, 2**31, 3000),
        ]
    )
    x = np.concatenate([rng.integers(0, 2**31, len(divisors)), np.full(len(divisors), 2**31 - 1),
                        divisors - 1, divisors, divisors * 3 - 1]).astype(np.int64)  # fmt: skip
    d = np.tile(divisors, 5)
    x = np.minimum(x, 2**31 - 1)
    mul, shift = magic_numbers(d)
    assert (mul < 2**32).all()
    assert (shift <= 62).all()
    got = (x.astype(np.uint64) * mul.astype(np.uint64)) >> shift.astype(np.uint64)
    np.testing.assert_array_equal(got.astype(np.int64), x // d)


@pytest.mark.parametrize("seed", range(5))
def test_collapse_keeps_every_operand_index(seed):
    rng = np.random.default_rng(seed)
    n = 6
    out = rng.integers(1, 4, (n, 6))
    ops = []
    for _ in range(2):
        shapes = np.where(rng.random((n, 6)) < 0.4, 1, out)
        ops.append((shapes, contiguous_strides(shapes)))
    ext, strides, rank = collapse(out, [s for _, s in ops])
    assert rank <= 6
    assert (np.prod(ext, axis=1) == np.prod(out, axis=1)).all()
    for i in range(n):
        coords = np.indices(out[i]).reshape(6, -1)
        flat = np.ravel_multi_index(coords, out[i])
        coll = np.unravel_index(flat, ext[i])
        for (_, full), col in zip(ops, strides, strict=True):
            want = (coords * full[i][:, None]).sum(axis=0)
            got = sum(c * s for c, s in zip(coll, col[i], strict=True))
            np.testing.assert_array_equal(got, want)
        assert (ext[i, : 6 - rank] == 1).all()


def test_plan_tiles_cover_each_element_once():
    sizes = np.array([5, 0, 8192, 8193, 1, 20000, 3])
    starts = np.cumsum(sizes) - sizes + np.array([0, 0, 7, 7, 9, 9, 9])  # gaps between samples
    grid, tiles, columns, _ = plan_tiles(starts, sizes, 4096, global_ok=True)
    assert tiles is not None  # gaps: no GLOBAL
    assert tiles[0] == len(sizes)
    assert grid == tiles[-1]
    first = tiles[1:]
    seen = np.zeros(int(columns[:, 1].max()), np.int64)
    for pid in range(grid):  # what _helper_stream_tile computes: the sample owning the program
        sample = int(np.searchsorted(first, pid, side="right")) - 1
        block = columns[sample, 0] // 4096 + pid - first[sample]
        lo = max(block * 4096, columns[sample, 0])
        hi = min((block + 1) * 4096, columns[sample, 1])
        assert lo < hi
        seen[lo:hi] += 1
    inside = np.zeros_like(seen)
    for a, b in columns:
        inside[a:b] = 1
    np.testing.assert_array_equal(seen, inside)
    grid, tiles, _, total = plan_tiles(np.cumsum(sizes) - sizes, sizes, 4096, global_ok=True)
    assert tiles is None
    assert total == sizes.sum()
    assert grid == -(-total // 4096)


# ---- ops on multi-tile samples (both backends, independent references) ----------------------
@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_arithmetic_several_tiles_dense_scalar_broadcast(dtype):
    shapes = U8_SHAPES if dtype == np.uint8 else F32_SHAPES
    samples = _rng_images(shapes, dtype)
    other = _rng_images(shapes, dtype, seed=1)
    chan = [np.array([3, 1, 2], dtype) for _ in shapes]
    rows = [np.arange(s[0], dtype=dtype).reshape(-1, 1, 1) for s in shapes]
    for backend in ("cpu", "gpu"):
        move = (lambda b: b.gpu()) if backend == "gpu" else (lambda b: b)
        a = move(ndd.as_batch(samples, layout="HWC"))
        positive = move(ndd.as_batch([np.abs(x) for x in samples], layout="HWC"))
        cases = [
            (
                a + move(ndd.as_batch(other, layout="HWC")),
                [x + y for x, y in zip(samples, other, strict=True)],
            ),
            (a * 3, [x * (np.int32(3) if dtype == np.uint8 else np.float32(3)) for x in samples]),
            (a - move(ndd.as_batch(chan)), [x - c for x, c in zip(samples, chan, strict=True)]),
            (move(ndd.as_batch(rows)) * a, [r * x for r, x in zip(rows, samples, strict=True)]),
            (
                ndd.math.clamp(a, move(ndd.as_batch(rows)), 90),
                [
                    np.minimum(np.maximum(x, r), (np.int32 if dtype == np.uint8 else dtype)(90))
                    for x, r in zip(samples, rows, strict=True)
                ],
            ),
        ]
        if dtype == np.float32:
            cases.append((ndd.math.sqrt(positive), [np.sqrt(np.abs(x)) for x in samples]))
        else:
            cases.append((-a, [(0 - x.astype(np.int64)).astype(np.uint8) for x in samples]))
        for k, (got, want) in enumerate(cases):
            for i, (g, w) in enumerate(zip(got.cpu(), want, strict=True)):
                assert_close(np.asarray(g), w, rtol=1e-6 if dtype == np.float32 else 0,
                             where=f"{backend} case {k} sample {i}")  # fmt: skip


def test_cast_and_colour_several_tiles():
    floats = _rng_images(F32_SHAPES, np.float32)
    check_op(ndd.cast, floats, lambda s, dtype: ref_convert(s, np.uint8),
             args={"dtype": ndd.uint8}, layout="HWC", all_modes=False)  # fmt: skip
    images = _rng_images(U8_SHAPES, np.uint8)
    check_op(ndd.brightness_contrast, images, ref_brightness_contrast, layout="HWC",
             args={"brightness": 1.3, "contrast": 0.7}, all_modes=False, atol=1)  # fmt: skip
    check_op(ndd.brightness, images, lambda s, **a: ref_brightness_contrast(s, **a), layout="HWC",
             per_sample={"brightness": [np.float32(0.5 + 0.25 * i) for i in range(4)]},
             all_modes=False, atol=1)  # fmt: skip
    gray = np.array([[0.299, 0.587, 0.114]])
    check_op(lambda b: ndd.color_space_conversion(b, image_type=ndd.types.RGB,
                                                  output_type=ndd.types.GRAY),
             images, lambda s: ref_matrix(s, gray), layout="HWC", all_modes=False,
             atol=1)  # fmt: skip


def test_grid_mask_normalize_one_hot_several_tiles():
    images = _rng_images(U8_SHAPES[:2], np.uint8)
    check_op(
        ndd.grid_mask,
        images,
        grid_ref,
        layout="HWC",
        all_modes=False,
        per_sample={"tile": [9, 4], "ratio": [0.4, 0.6], "angle": [0.3, -1.0]},
    )
    floats = _rng_images(F32_SHAPES, np.float32)
    for args in ({"axes": [0, 1]}, {"mean": 2.0, "stddev": 3.0}, {"axes": [1], "scale": 2.0}):
        check_op(ndd.normalize, floats, lambda s, **a: ref_normalize(s, **a), args=args,
                 layout="HWC", all_modes=False, rtol=1e-5, atol=1e-5)  # fmt: skip
    labels = [np.random.default_rng(3).integers(-1, 6, s[:2]).astype(np.int32)
              for s in U8_SHAPES[:2]]  # fmt: skip
    for axis in (-1, 0):
        check_op(ndd.one_hot, labels, lambda s, **a: ref_one_hot(s, **a),
                 args={"num_classes": 6, "axis": axis}, all_modes=False)  # fmt: skip


# ---- kernels on batches packed unlike their output (per-sample deltas) ----------------------
# the emulated gpu's memory is the host's; on a real GPU (NDD_TRITON_TEST_DEVICE=cuda) the
# kernels need device memory
DEV = torch.device("cuda" if os.environ.get("NDD_TRITON_TEST_DEVICE") == "cuda" else "cpu")


def _scattered(samples, gap=5):
    """A GpuBatch of `samples` stored in reverse order with gaps (no common packing)."""
    flat = [np.asarray(s).reshape(-1) for s in samples]
    offsets, pos = np.zeros(len(flat), np.int64), gap
    for i in reversed(range(len(flat))):
        offsets[i] = pos
        pos += flat[i].size + gap
    data = np.zeros(pos, flat[0].dtype)
    for off, f in zip(offsets, flat, strict=True):
        data[off : off + f.size] = f
    shapes = np.array([s.shape for s in samples], np.int64)
    return GpuBatch(torch.from_numpy(data).to(DEV), offsets, shapes, "HWC",
                    DType.from_fw_type(data.dtype))  # fmt: skip


def _packed_output(shapes, dtype):
    sizes = np.array([int(np.prod(s)) for s in shapes], np.int64)
    data = torch.zeros(int(sizes.sum()) + 3, dtype=dtype, device=DEV)  # starts 3 elements in
    offsets = np.cumsum(sizes) - sizes + 3
    return GpuBatch(data, offsets, np.array(shapes, np.int64), "HWC",
                    DType.from_fw_type(data.dtype))  # fmt: skip


def _read(batch):
    data = batch.data.cpu().numpy()
    return [
        data[o : o + int(np.prod(s))].reshape(s)
        for o, s in zip(batch.offsets, batch.shapes, strict=True)
    ]


def _call(op, names, compute, consts=None):
    schema = SimpleNamespace(inputs=[SimpleNamespace(name=n) for n in names])
    return SimpleNamespace(compute_dtype=DType.parse(compute), schema=schema, values=consts or {})


@pytest.mark.parametrize("wide", [False, True])
def test_elementwise_kernels_with_scattered_inputs(monkeypatch, wide):
    if wide:  # the 64-bit index path of huge samples, exercised on small ones
        monkeypatch.setattr(_elementwise, "INT32_LIMIT", 2 * 8192)
    run = GpuRun(DEV)
    a = _rng_images(F32_SHAPES, np.float32)
    b = _rng_images(F32_SHAPES, np.float32, seed=1)
    chan = [np.array([[[0.5, 2.0, -1.0]]], np.float32) for _ in F32_SHAPES]
    out = _packed_output(F32_SHAPES, torch.float32)
    _elementwise.launch_elementwise(
        run, out, [_scattered(a), _scattered(b)], _call("add", ["left", "right"], "f32"), "add"
    )
    for g, x, y in zip(_read(out), a, b, strict=True):
        assert_close(g, x + y)
    _elementwise.launch_elementwise(
        run, out, [_scattered(a), _scattered(chan)], _call("mul", ["left", "right"], "f32"), "mul"
    )
    for g, x, c in zip(_read(out), a, chan, strict=True):
        assert_close(g, x * c)
    _elementwise.launch_elementwise(run, out, [_scattered(a)], _call("abs", ["input"], "f32"),
                                    "abs")  # fmt: skip
    for g, x in zip(_read(out), a, strict=True):
        assert_close(g, np.abs(x))


def test_cast_and_affine_kernels_with_scattered_inputs():
    run = GpuRun(DEV)
    a = _rng_images(F32_SHAPES, np.float32)
    out = _packed_output(F32_SHAPES, torch.uint8)
    _launch_cast(run, out, _scattered(a))
    for g, x in zip(_read(out), a, strict=True):
        assert_close(g, ref_convert(x, np.uint8))
    images = _rng_images(U8_SHAPES, np.uint8)
    n = len(images)
    matrix = np.tile(np.array([[0.299, 0.587, 0.114]], np.float32), (n, 1, 1))
    gray = _packed_output([(*s[:2], 1) for s in U8_SHAPES], torch.uint8)
    launch_affine(run, gray, _scattered(images), matrix, np.zeros((n, 1), np.float32))
    for g, x in zip(_read(gray), images, strict=True):
        want = np.floor(x.astype(np.float32) @ matrix[0].T + np.float32(0.5))
        assert_close(g, want.astype(np.uint8), atol=1)


def test_stream_kernels_when_samples_are_stored_in_reverse_order():
    run = GpuRun(DEV)
    a = _rng_images(U8_SHAPES, np.uint8)
    inp = _scattered(a)
    out = _scattered([np.zeros_like(x) for x in a])  # the same packing: read at the stream index
    _elementwise.launch_elementwise(run, out, [inp, inp], _call("add", ["left", "right"], "u8"),
                                    "add")  # fmt: skip
    for g, x in zip(_read(out), a, strict=True):
        assert_close(g, x + x)
    floats = _scattered([np.zeros(x.shape, np.float32) for x in a])
    _launch_cast(run, floats, inp)
    for g, x in zip(_read(floats), a, strict=True):
        assert_close(g, x.astype(np.float32))


def test_random_lanes_share_philox_blocks_across_several_tiles():
    """One Philox block per 4 lanes (one-draw ops) or 2 lanes (two-draw ops), on samples of
    several 1024-element tiles with odd sizes, against the independent scalar Philox."""
    from test_random_ops import bases, ref_draws, unit24

    sizes = [2500, 7, 1031]
    shapes = ndd.as_batch([np.array([s]) for s in sizes])
    starts = bases(sizes)
    got = samples_of(ndd.random.uniform(shape=shapes, range=[-2.0, 3.0], device="gpu",
                                        rng=ndd.random.RNG(seed=5)))  # fmt: skip
    for g, start, n in zip(got, starts, sizes, strict=True):
        expected = (-2.0 + unit24(ref_draws(5, start, n)) * 5.0).astype(np.float32)
        np.testing.assert_array_equal(g, expected)
    got = samples_of(ndd.random.coin_flip(shape=shapes, probability=0.3, device="gpu",
                                          rng=ndd.random.RNG(seed=6)))  # fmt: skip
    for g, start, n in zip(got, starts, sizes, strict=True):
        np.testing.assert_array_equal(g, (unit24(ref_draws(6, start, n)) < 0.3).astype(g.dtype))
    starts2 = bases([2 * s for s in sizes])
    got = samples_of(ndd.random.uniform(shape=shapes, range=[0, 9], dtype=ndd.int32, device="gpu",
                                        rng=ndd.random.RNG(seed=7)))  # fmt: skip
    for g, start, n in zip(got, starts2, sizes, strict=True):
        d = ref_draws(7, start, 2 * n)
        u64 = [(int(d[2 * i]) << 32) | int(d[2 * i + 1]) for i in range(n)]
        np.testing.assert_array_equal(g, np.array([u * 10 >> 64 for u in u64], np.int32))
