"""The one-pass resample + normalising store (compile mode's RN50 chain,
`kernels/gpu/resample_normalize.py`): the same bytes as random_resized_crop -> flip ->
crop_mirror_normalize run one by one, and a NumPy reference for the normalisation and mirror."""

from __future__ import annotations

import numpy as np

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
    assert [it.gpu_launches for it in prof.compiled] == [2, 2]  # tap tables, then one pass
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
