"""Compile mode over a wider op battery: generated chains of 2-5 image ops (colour, geometry,
filters, noise, erase/paste/pad/slice, JPEG distortion, equalize, CLAHE, lookup tables, the
arithmetic operators), ragged batches, per-sample and random arguments, both backends, and
audio chains (the log-mel recipe and its neighbours); every iteration's bytes equal eager
mode's (`test_compile_mode.py` has the smaller core battery)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from test_compile_mode import BS, LAST, STEPS, _images, _run, _same, _uniform
from test_compile_mode import _body as body_of
from test_compile_mode import _chains as chains_of

import ndd_triton as ndd
from ndd_triton.runtime.compiled import CompileFallbackWarning


def _per_sample(values: list, dtype: type = np.float32) -> ndd.Batch:
    return ndd.as_batch([np.asarray(v, dtype) for v in values])


_WARP = np.array([[1.0, 0.1, 0.5], [-0.1, 1.0, 0.3]], np.float32)
MORE = {
    "brightness_contrast": lambda x: ndd.brightness_contrast(
        x, brightness=_uniform(0.8, 1.2), contrast=_uniform(0.7, 1.3),
        contrast_center=_uniform(60, 180)),
    "hsv": lambda x: ndd.hsv(x, hue=_uniform(-30, 30), saturation=_uniform(0.5, 1.5),
                             value=_uniform(0.8, 1.2)),
    "csc": lambda x: ndd.color_space_conversion(x, image_type=ndd.types.RGB,
                                                output_type=ndd.types.BGR),
    "jitter": lambda x: ndd.jitter(x, nDegree=2),
    "water": lambda x: ndd.water(x, ampl_x=2.0, freq_x=0.5, phase_y=0.3),
    "sphere": lambda x: ndd.sphere(x),
    "warp": lambda x: ndd.warp_affine(x, matrix=ndd.as_batch([_WARP] * BS), fill_value=7),
    "grid_mask": lambda x: ndd.grid_mask(x, tile=_per_sample([3, 2, 4], np.int32),
                                         ratio=_uniform(0.3, 0.6), angle=_uniform(-1, 1)),
    "erase": lambda x: ndd.erase(x, anchor=_per_sample([[0, 1], [2, 0], [1, 1]]),
                                 shape=_per_sample([[2, 2], [1, 3], [3, 1]]),
                                 axis_names="HW", fill_value=9),
    "blur": lambda x: ndd.gaussian_blur(x, sigma=_uniform(0.5, 1.5)),
    "laplacian": lambda x: ndd.laplacian(x, window_size=3),
    "filter": lambda x: ndd.filter(
        x, np.array([[0, 1, 0], [1, 2, 1], [0, 1, 0]], np.float32) / 6),
    "pad": lambda x: ndd.pad(x, fill_value=5, shape=[9, 10], axis_names="HW"),
    "slice": lambda x: ndd.slice(x, rel_start=_per_sample([[0.1, 0.2], [0.0, 0.3], [0.25, 0.0]]),
                                 rel_shape=_per_sample([[0.6, 0.7]] * BS), axis_names="HW",
                                 out_of_bounds_policy="trim_to_shape"),
    "paste": lambda x: ndd.paste(x, ratio=_uniform(1.0, 1.6), paste_x=_uniform(0.0, 1.0),
                                 fill_value=[1, 2, 3]),
    "rrc": lambda x: ndd.random_resized_crop(x, size=[5, 6]),
    "rcm": lambda x: ndd.resize_crop_mirror(x, resize_shorter=7, crop=[4, 5],
                                            mirror=ndd.random.coin_flip(batch_size=BS)),
    "salt": lambda x: ndd.noise.salt_and_pepper(x, prob=0.2),
    "shot": lambda x: ndd.noise.shot(x, factor=_uniform(1.0, 3.0)),
    "jpeg": lambda x: ndd.jpeg_compression_distortion(x, quality=_per_sample([30, 60, 90],
                                                                             np.int32)),
    "equalize": lambda x: ndd.equalize(x),
    "lut": lambda x: ndd.lookup_table(x, keys=[0, 10, 200], values=[5, 6, 7], default_value=1,
                                      dtype=ndd.uint8),
    "saturation_random": lambda x: ndd.saturation(x, saturation=_uniform(0.2, 1.8)),
    "clahe": lambda x: ndd.clahe(x, tiles_x=2, tiles_y=2, clip_limit=2.0),
    "affine_u8": lambda x: ndd.cast(ndd.math.clamp(x * _uniform(0.6, 1.4) - 15, 0, 255),
                                    dtype=ndd.uint8),
}  # fmt: skip
STEPS_ALL = {**STEPS, **MORE}
LAST_ALL = {
    **LAST,
    "cmn_pad": lambda x: ndd.crop_mirror_normalize(
        x, crop=[6, 9], crop_pos_x=_uniform(0, 1), out_of_bounds_policy="pad",
        fill_values=[3.0], mean=[1.0], std=[2.0], dtype=ndd.uint8),
}  # fmt: skip
# interpreted GPU kernels of these take seconds on these images: CPU chains only
_SLOW_ON_EMULATED_GPU = {"clahe", "jitter", "rrc", "water"}


def _chains(count: int, seed: int, gpu: bool) -> list[list[str]]:
    steps = {n: f for n, f in STEPS_ALL.items() if not (gpu and n in _SLOW_ON_EMULATED_GPU)}
    return chains_of(count, seed, steps, LAST_ALL)


def _body(chain: list[str]):
    return lambda x: body_of(chain, x, STEPS_ALL, LAST_ALL)


def _check(chain: list[str], backend: str, seed: int) -> None:
    data = _images(seed)
    eager, _ = _run([], data, backend, False, body=_body(chain))
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileFallbackWarning)
        compiled, epoch = _run([], data, backend, True, body=_body(chain))
    _same(eager, compiled, f"{chain} on {backend}: compiled vs eager")
    session = epoch.session  # type: ignore[attr-defined]
    assert session.fallback_reason is None
    assert session.replayed == len(session.program) * (len(data) - 1)


@pytest.mark.parametrize("chain", _chains(20, seed=7, gpu=False), ids="-".join)
def test_battery_chain_cpu(chain: list[str]) -> None:
    _check(chain, "cpu", seed=len("".join(chain)))


@pytest.mark.parametrize("chain", _chains(6, seed=8, gpu=True), ids="-".join)
def test_battery_chain_gpu(chain: list[str]) -> None:
    _check(chain, "gpu", seed=len("".join(chain)))


@pytest.mark.parametrize("seed", [72, 317, 390])
def test_arithmetic_chain_then_resize_on_other_threads(seed: int) -> None:
    """Found by this battery: compile mode ran the resize of this chain on the executor while
    eager mode ran it on the caller's thread, and MKL's thread count there changed a GEMM's
    rounding (one pixel off by one in ~30% of runs; `runtime/torch_threads.SerialBlas`)."""
    for _ in range(3):
        _check(["csc", "bits", "rrc", "flip"], "cpu", seed)


AUDIO = {
    "preemphasis": lambda x: ndd.preemphasis_filter(x, preemph_coeff=_uniform(0.9, 0.99)),
    "spectrogram": lambda x: ndd.spectrogram(x, nfft=32, window_length=32, window_step=16),
    "mel": lambda x: ndd.mel_filter_bank(x, nfilter=8, sample_rate=8000.0),
    "decibels": lambda x: ndd.to_decibels(x, cutoff_db=-60.0),
    "mfcc": lambda x: ndd.mfcc(x, n_mfcc=5),
    "normalize": lambda x: ndd.normalize(x, axes=[1]),
    "power": lambda x: ndd.power_spectrum(x, nfft=32),
    "resample": lambda x: ndd.audio_resample(x, scale=_uniform(0.6, 1.4)),
}


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
@pytest.mark.parametrize("chain", [
    ["preemphasis", "spectrogram", "mel", "decibels", "normalize"],
    ["resample", "spectrogram", "mel", "decibels", "mfcc"],
    ["preemphasis", "power"],
], ids="-".join)  # fmt: skip
def test_audio_chain(chain: list[str], backend: str) -> None:
    """The log-mel recipe and its neighbours on ragged clips with random arguments."""
    gen = np.random.default_rng(len(chain))
    data = [[gen.standard_normal(int(gen.integers(200, 400))).astype(np.float32)
             for _ in range(BS)] for _ in range(4)]  # fmt: skip

    def body(x: ndd.Batch) -> ndd.Batch:
        for name in chain:
            x = AUDIO[name](x)
        return x

    def run(compile_: bool) -> tuple[list[list[np.ndarray]], object]:
        ndd.random.set_seed(1234)
        batches = [ndd.as_batch(d, device=backend) for d in data]
        epoch = ndd.ExternalSource(iter(batches), device=backend).captured(BS) if compile_ \
            else iter(batches)  # fmt: skip
        return [[np.array(s) for s in body(x).cpu()] for x in epoch], epoch

    eager, _ = run(False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileFallbackWarning)
        compiled, epoch = run(True)
    _same(eager, compiled, f"{chain} on {backend}: compiled vs eager")
    session = epoch.session  # type: ignore[attr-defined]
    assert session.replayed == len(session.program) * (len(data) - 1)
