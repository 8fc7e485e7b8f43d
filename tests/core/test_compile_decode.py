"""Compile mode's decode_slice fusion (runtime/fusion_decode.py): decoders.image read only by
slice decodes just the window (as decoders.image_slice), with the bytes of eager mode's decode +
slice, also when the group spans a reused program's first random call."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import ndd_triton as ndd
from ndd_triton.decoders import _roi_decode
from ndd_triton.runtime.compiled import CompileFallbackWarning

PHOTOS = Path(ndd.__file__).parent / "data" / "images"
BS = 4


def _jpeg_batches(iterations: int = 3) -> list[list[np.ndarray]]:
    files = [np.fromfile(p, np.uint8) for p in sorted(PHOTOS.glob("*.jpg"))]
    return [[files[(k * BS + i) % len(files)] for i in range(BS)] for k in range(iterations)]


def _detection_like(x: ndd.Batch) -> ndd.Batch:
    images = ndd.decoders.image(x)
    start = ndd.random.uniform(batch_size=BS, range=[0.0, 0.4], shape=[2])
    size = ndd.random.uniform(batch_size=BS, range=[0.3, 0.6], shape=[2])
    images = ndd.slice(images, start, size)
    return ndd.resize(images, size=[24, 20])


def _padded(x: ndd.Batch) -> ndd.Batch:
    images = ndd.decoders.image(x)
    start = ndd.random.uniform(batch_size=BS, range=[0.5, 0.9], shape=[2])
    return ndd.slice(images, start, [0.5, 0.5], out_of_bounds_policy="pad")


def _run(body, data, compile_: bool):
    ndd.random.set_seed(5)
    batches = [ndd.as_batch(d) for d in data]
    epoch = ndd.ExternalSource(iter(batches)).captured(BS) if compile_ else iter(batches)
    outs = []
    with ndd.profile() as prof, warnings.catch_warnings():
        warnings.simplefilter("error", CompileFallbackWarning)
        for x in epoch:
            outs.append([np.array(s) for s in body(x).cpu()])
    return outs, prof, epoch


@pytest.mark.parametrize("body", [_detection_like, _padded], ids=lambda b: b.__name__)
def test_decode_then_slice_decodes_the_window(monkeypatch, body) -> None:
    """Windows inside the images: one invocation decoding only the window (region decodes
    counted); windows leaving the image (slice pads): decode and slice run on their own.
    Both give eager mode's bytes."""
    data = _jpeg_batches()
    eager, _, _ = _run(body, data, False)
    regions = []
    real = _roi_decode.decode_window

    def counting(*args):
        regions.append(args[3:])
        return real(*args)

    monkeypatch.setattr(_roi_decode, "decode_window", counting)
    compiled, prof, epoch = _run(body, data, True)
    for a, b in zip(eager, compiled, strict=True):
        for sa, sb in zip(a, b, strict=True):
            assert sa.shape == sb.shape and np.array_equal(sa, sb)
    assert {g.kind for g in epoch.session.groups.values()} == {"decode_slice"}
    later = prof.compiled[1:]  # iteration 0 is traced eagerly
    assert later
    for it in later:
        names = [g.ops for g in it.groups]
        if body is _detection_like:
            assert ("decoders.image", "slice") in names, names
        else:
            assert ("decoders.image",) in names and ("slice",) in names, names
    if body is _detection_like:
        assert len(regions) >= 4  # the large photos' windows (small images decode whole)
    else:
        assert not regions


def test_an_rng_made_anew_each_epoch_decodes_each_image_once(monkeypatch, tmp_path) -> None:
    """A reader's later epochs reuse the program, whose decode_slice group spans the first
    random call (the window's draw, with an RNG made anew each epoch: the program re-traces
    there). The iterations read ahead prepare the decoder (run only if read: the re-traced
    iteration 0 reads it) and fuse it once the window is drawn: every image is decoded once,
    with eager mode's bytes."""
    from ndd_triton.decoders import _pillow
    from ndd_triton.kernels.cpu import decoders as cpu_decoders

    root = tmp_path / "0"
    root.mkdir()
    photos = sorted(PHOTOS.glob("*.jpg"))
    for i in range(12):
        (root / f"{i:02d}.jpg").write_bytes(photos[i % len(photos)].read_bytes())
    decoded = []
    sample, direct = cpu_decoders.decode_sample, _pillow.direct_rgb_decoder()

    def counted_sample(out, arg, op):
        decoded.append(op)
        return sample(out, arg, op)

    def counted_direct(*args, **kwargs):
        decoded.append("direct")
        return direct(*args, **kwargs)

    monkeypatch.setattr(cpu_decoders, "decode_sample", counted_sample)
    monkeypatch.setattr(_pillow, "direct_rgb_decoder", lambda: counted_direct)

    def run(compile_: bool) -> tuple[list, int, list]:
        ndd.random.set_seed(5)
        reader = ndd.readers.File(file_root=str(tmp_path), random_shuffle=True, seed=3)
        outs = []
        decoded.clear()
        with ndd.profile() as prof:
            for epoch in range(3):
                rng = ndd.random.RNG(seed=10 + epoch)
                for jpegs, _ in reader.next_epoch(batch_size=2, compile=compile_):
                    images = ndd.decoders.image(jpegs)
                    start = ndd.random.uniform(batch_size=2, range=[0.0, 0.4], shape=[2],
                                               rng=rng)  # fmt: skip
                    images = ndd.slice(images, start, [0.5, 0.5])
                    outs.append([np.array(s) for s in images.cpu()])
        fused = [r.op for r in prof.records if r.op == "decoders.image+slice" and
                 r.run_s is not None]  # fmt: skip
        return outs, len(decoded), fused

    eager, eager_decodes, _ = run(False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileFallbackWarning)
        compiled, decodes, fused = run(True)
    for a, b in zip(eager, compiled, strict=True):
        for sa, sb in zip(a, b, strict=True):
            assert sa.shape == sb.shape and np.array_equal(sa, sb)
    assert eager_decodes == decodes == 3 * 12
    assert len(fused) >= 3 * 5 - 1  # all but each epoch's re-traced iteration 0


# colour JPEGs: baseline 4:2:0, 4:2:2 and 4:4:4 (rows decoded) and a progressive one (not tried)
_COLOUR = ["astronaut_512x512.jpg", "chelsea_451x300.jpg", "coffee_600x400.jpg",
           "hubble_1000x872_444.jpg", "ihc_333x333.jpg", "rocket_640x427.jpg",
           "retina_1024x1024_progressive.jpg"]  # fmt: skip


def _colour_batches(iterations: int = 3) -> list[list[np.ndarray]]:
    files = [np.fromfile(PHOTOS / name, np.uint8) for name in _COLOUR]
    return [[files[(k * BS + i) % len(files)] for i in range(BS)] for k in range(iterations)]


def _rn50(x: ndd.Batch) -> ndd.Batch:  # decode_rows as the head of a CPU resample_cmn group
    images = ndd.random_resized_crop(ndd.decoders.image(x), size=[24, 20], random_area=[0.05, 0.5])
    images = ndd.flip(images, horizontal=ndd.random.coin_flip(batch_size=BS))
    return ndd.crop_mirror_normalize(images, mean=[120.0, 110.0, 100.0], std=[60.0, 50.0, 70.0])


def _rrc_alone(x: ndd.Batch) -> ndd.Batch:  # a decode_rows group (no normalisation after it)
    return ndd.random_resized_crop(ndd.decoders.image(x), size=[18, 22], random_area=[0.05, 0.4],
                                   antialias=False)  # fmt: skip


def _resize_crop(x: ndd.Batch) -> ndd.Batch:  # a resize reads every row: nothing to save
    return ndd.crop_mirror_normalize(ndd.resize(ndd.decoders.image(x), size=[30, 30]),
                                     crop=[24, 24], mean=[128.0], std=[64.0])  # fmt: skip


@pytest.mark.parametrize("body", [_rn50, _rrc_alone, _resize_crop], ids=lambda b: b.__name__)
def test_decode_then_resize_decodes_only_the_rows_it_reads(monkeypatch, body) -> None:
    """A CPU decoder read only by random_resized_crop (or resize) decodes each baseline JPEG
    down to the last row the resize reads: eager mode's bytes, with the rows below the decoded
    ones filled with noise (so a resize reading one of them would differ)."""
    from ndd_triton.kernels.cpu import decoders as cpu_decoders

    data = _colour_batches()
    eager, _, _ = _run(body, data, False)
    real = cpu_decoders.decode_top_rows
    noise = np.random.default_rng(0)
    limited: list[int] = []

    def spoiled(encoded: np.ndarray, last_row: int, buffer: np.ndarray | None = None):
        got = real(encoded, last_row, buffer)
        if got is not None:
            limited.append(len(got))
            buffer[len(got):] = noise.integers(0, 256, buffer[len(got):].shape, np.uint8)
        return got

    monkeypatch.setattr(cpu_decoders, "decode_top_rows", spoiled)
    compiled, prof, _ = _run(body, data, True)
    for a, b in zip(eager, compiled, strict=True):
        for x, y in zip(a, b, strict=True):
            assert np.array_equal(x, y)
    if body is _resize_crop:
        assert not limited
    else:
        assert len(limited) >= BS  # of 8 (iteration 0 runs eagerly while it is traced)
    ops = {g.ops for it in prof.compiled for g in it.groups}
    assert ("decoders.image",) in ops  # its own call, as in eager mode


def test_the_decoded_images_read_by_the_caller_are_whole(monkeypatch) -> None:
    """The caller reading the decoder's result after the crop (its own full decode, computed
    on that read) gets eager mode's whole images, while the crop reads the rows-limited ones."""
    from ndd_triton.kernels.cpu import decoders as cpu_decoders

    data = _colour_batches()
    seen: list = []

    def body(x: ndd.Batch) -> ndd.Batch:
        decoded = ndd.decoders.image(x)
        out = _rn50_from(decoded)
        seen.append([np.array(s) for s in decoded.cpu()])
        return out

    eager, _, _ = _run(body, data, False)
    eager_seen, seen[:] = list(seen), []
    real = cpu_decoders.decode_top_rows
    limited: list[int] = []

    def counted(encoded: np.ndarray, last_row: int, buffer: np.ndarray | None = None):
        got = real(encoded, last_row, buffer)
        limited.extend([] if got is None else [len(got)])
        return got

    monkeypatch.setattr(cpu_decoders, "decode_top_rows", counted)
    compiled, _, _ = _run(body, data, True)
    for a, b in zip([*eager, *eager_seen], [*compiled, *seen], strict=True):
        for x, y in zip(a, b, strict=True):
            assert np.array_equal(x, y)
    assert limited  # the crop still read rows-limited decodes


def _rn50_from(images: ndd.Batch) -> ndd.Batch:
    images = ndd.random_resized_crop(images, size=[24, 20], random_area=[0.05, 0.5])
    images = ndd.flip(images, horizontal=ndd.random.coin_flip(batch_size=BS))
    return ndd.crop_mirror_normalize(images, mean=[120.0, 110.0, 100.0], std=[60.0, 50.0, 70.0])
