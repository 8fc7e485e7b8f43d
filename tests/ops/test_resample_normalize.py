"""The one-pass resample + normalising store (compile mode's RN50 chain,
`kernels/gpu/resample_normalize.py`): the same bytes as random_resized_crop -> flip ->
crop_mirror_normalize run one by one, and a NumPy reference for the normalisation and mirror."""

from __future__ import annotations

import numpy as np
import pytest

import ndd_triton as ndd

BS = 3
MEAN = np.array([123.7, 116.3, 103.5], np.float32)
STD = np.array([58.4, 57.1, 57.4], np.float32)


def test_rn50_chain_one_pass_matches_ops_and_reference() -> None:
    gen = np.random.default_rng(5)
    data = [[gen.integers(0, 256, (int(gen.integers(9, 30)), int(gen.integers(9, 30)), 3),
                          dtype=np.uint8) for _ in range(BS)] for _ in range(3)]  # fmt: skip
    seen: dict[str, list] = {"resized": [], "flips": []}

    def body(x: ndd.Batch, keep: bool) -> ndd.Batch:
        resized = ndd.random_resized_crop(x, size=(6, 8))
        flips = ndd.random.coin_flip(batch_size=BS)
        out = ndd.crop_mirror_normalize(ndd.flip(resized, horizontal=flips), mean=list(MEAN),
                                        std=list(STD))  # fmt: skip
        if keep:  # read after the chain was issued: computed on its own
            seen["resized"].append([np.array(s) for s in resized.cpu()])
            seen["flips"].append([int(np.asarray(s)) for s in flips.cpu()])
        return out

    results = {}
    for compile_ in (False, True):
        ndd.random.set_seed(11)
        batches = [ndd.as_batch(d, layout="HWC", device="gpu") for d in data]
        epoch = ndd.ExternalSource(iter(batches), device="gpu").captured(BS) if compile_ \
            else iter(batches)  # fmt: skip
        with ndd.profile() as prof:
            results[compile_] = [[np.array(s) for s in body(x, compile_).cpu()] for x in epoch]
    for a, b in zip(results[False], results[True], strict=True):
        for sa, sb in zip(a, b, strict=True):
            np.testing.assert_array_equal(sb, sa)
    assert [it.gpu_launches for it in prof.compiled] == [1, 1]  # the taps computed in the pass
    for k in (1, 2):  # the compiled iterations
        for i, out in enumerate(results[True][k]):
            resized = seen["resized"][k][i].astype(np.float32)
            if seen["flips"][k][i]:
                resized = resized[:, ::-1]
            expected = ((resized - MEAN) / STD).transpose(2, 0, 1)
            np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


def test_host_tables_when_the_filter_has_no_device_tables() -> None:
    """A cubic resample (tables built on the host): still one pass, eager mode's bytes."""
    gen = np.random.default_rng(6)
    data = [[gen.integers(0, 256, (int(gen.integers(9, 30)), int(gen.integers(9, 30)), 3),
                          dtype=np.uint8) for _ in range(BS)] for _ in range(3)]  # fmt: skip

    def body(x: ndd.Batch) -> ndd.Batch:
        resized = ndd.random_resized_crop(x, size=(6, 8), interp_type=ndd.types.INTERP_CUBIC)
        return ndd.crop_mirror_normalize(resized, mean=list(MEAN), std=list(STD))

    results = {}
    for compile_ in (False, True):
        ndd.random.set_seed(12)
        batches = [ndd.as_batch(d, layout="HWC", device="gpu") for d in data]
        epoch = ndd.ExternalSource(iter(batches), device="gpu").captured(BS) if compile_ \
            else iter(batches)  # fmt: skip
        with ndd.profile() as prof:
            results[compile_] = [[np.array(s) for s in body(x).cpu()] for x in epoch]
    for a, b in zip(results[False], results[True], strict=True):
        for sa, sb in zip(a, b, strict=True):
            np.testing.assert_array_equal(sb, sa)
    assert [it.gpu_launches for it in prof.compiled] == [1, 1]


def _compiled_outputs(body, data, seed: int) -> tuple[list, list]:  # type: ignore[no-untyped-def]
    """(outputs per compiled iteration, GPU launches per compiled iteration) of `body`."""
    ndd.random.set_seed(seed)
    batches = [ndd.as_batch(d, layout="HWC", device="gpu") for d in data]
    with ndd.profile() as prof:
        outs = [[np.array(s) for s in body(x).cpu()]
                for x in ndd.ExternalSource(iter(batches), device="gpu").captured(BS)]  # fmt: skip
    return outs, [it.gpu_launches for it in prof.compiled]


@pytest.mark.parametrize("recipe", ["rrc", "window", "upscale"])
def test_inline_taps_match_the_tables_form(recipe: str, monkeypatch) -> None:
    """The one-launch form (taps computed in the pass) against the tables + pass form and eager
    mode, bit for bit: downscales of up to 14x (8 to 30 taps: the pairwise sums' blocks),
    upscales, outputs wider than a program's columns, a crop window, mirror, HWC/CHW, float16."""
    from ndd_triton.kernels.gpu import resample_normalize

    gen = np.random.default_rng(9)
    data = [[gen.integers(0, 256, (int(gen.integers(40, 70)), int(gen.integers(5, 160)), 3),
                          dtype=np.uint8) for _ in range(BS)] for _ in range(3)]  # fmt: skip
    small = [[gen.integers(0, 256, (int(gen.integers(3, 8)), int(gen.integers(3, 8)), 3),
                           dtype=np.uint8) for _ in range(BS)] for _ in range(3)]  # fmt: skip

    def rrc(x: ndd.Batch) -> ndd.Batch:  # 6-14x down in H (13-30 taps), 70 columns: 2 programs
        flips = ndd.random.coin_flip(batch_size=BS)
        out = ndd.flip(ndd.random_resized_crop(x, size=(5, 70), random_area=(0.5, 1.0)),
                       horizontal=flips)  # fmt: skip
        return ndd.crop_mirror_normalize(out, mean=list(MEAN), std=list(STD))

    def window(x: ndd.Batch) -> ndd.Batch:  # the validation recipe: a crop of the resize
        out = ndd.resize(x, resize_shorter=12)
        return ndd.crop_mirror_normalize(out, crop=(9, 9), mean=list(MEAN), std=list(STD),
                                         mirror=1, dtype=ndd.float16, output_layout="HWC")

    def upscale(x: ndd.Batch) -> ndd.Batch:
        return ndd.crop_mirror_normalize(ndd.resize(x, size=[11, 13]), mean=list(MEAN),
                                         std=list(STD))  # fmt: skip

    recipes = {"rrc": (rrc, data), "window": (window, data), "upscale": (upscale, small)}
    body, inputs = recipes[recipe]  # (one recipe per test: they spread over the workers)
    inline, launches = _compiled_outputs(body, inputs, 21)
    assert launches == [1, 1], (body.__name__, launches)
    with monkeypatch.context() as m:
        m.setattr(resample_normalize, "MAX_INLINE_TAPS", 0)  # the tables + pass form
        tables, launches = _compiled_outputs(body, inputs, 21)
    assert launches == [2, 2], (body.__name__, launches)
    with monkeypatch.context() as m:  # programs of 3 rows: the last one's rows partly outside
        m.setattr(resample_normalize, "ROWS_PER_PROGRAM", 3)
        rows3, _ = _compiled_outputs(body, inputs, 21)
    ndd.random.set_seed(21)
    eager = [[np.array(s) for s in body(ndd.as_batch(d, layout="HWC", device="gpu")).cpu()]
             for d in inputs]  # fmt: skip
    for a, b, c, e in zip(inline, tables, rows3, eager, strict=True):
        for sa, sb, sc, se in zip(a, b, c, e, strict=True):
            assert sa.dtype == se.dtype and sa.shape == se.shape
            np.testing.assert_array_equal(sa.view(np.uint8), sb.view(np.uint8))
            np.testing.assert_array_equal(sc.view(np.uint8), se.view(np.uint8))
            np.testing.assert_array_equal(sa.view(np.uint8), se.view(np.uint8))
