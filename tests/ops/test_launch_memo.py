"""The GPU launch memo (runtime/launch_memo.py): a call whose signature repeats replays the
launches recorded for it, with its own buffers, and gives what the kernel itself gives."""

from __future__ import annotations

from collections.abc import Callable

import golden
import numpy as np
import pytest
from test_golden import CASES, run_case

import ndd_triton as ndd
from ndd_triton.kernels import lookup
from ndd_triton.runtime import launch_memo

SHAPES = [(5, 7, 3), (4, 9, 3), (6, 6, 3)]


def _images(seed: int, shapes: list[tuple[int, ...]] = SHAPES) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, s, dtype=np.uint8) for s in shapes]


def _per_sample(values: list, dtype: type = np.int32) -> ndd.Batch:
    return ndd.as_batch([np.array(v, dtype) for v in values])


MEAN, STD = [100.0, 110.0, 120.0], [50.0, 60.0, 70.0]
CALLS: dict[str, Callable[[ndd.Batch], ndd.Batch]] = {
    "flip": lambda b: ndd.flip(b, horizontal=_per_sample([1, 0, 1]), vertical=1),
    "cast": lambda b: ndd.cast(b, dtype=ndd.float32),
    "crop": lambda b: ndd.crop(b, crop=[3, 4], crop_pos_x=_per_sample([0.0, 0.5, 1.0], np.float32)),
    "crop_mirror_normalize": lambda b: ndd.crop_mirror_normalize(
        b, crop=[3, 3], mean=MEAN, std=STD, mirror=_per_sample([0, 1, 1]), dtype=ndd.float32,
        output_layout="CHW"),
    "rotate": lambda b: ndd.rotate(b, angle=_per_sample([10.0, -30.0, 95.0], np.float32)),
    "gaussian_blur": lambda b: ndd.gaussian_blur(b, sigma=1.0),
    "resize": lambda b: ndd.resize(b, size=[5, 6]),
    "color_twist": lambda b: ndd.color_twist(b, hue=10.0, saturation=1.2, contrast=0.9),
    "transpose": lambda b: ndd.transpose(b, perm=[2, 0, 1]),
    "reductions.sum": lambda b: ndd.reductions.sum(b, axes=[0, 1]),
    "add_self_other": lambda b: b + ndd.flip(b, horizontal=1),
    "water": lambda b: ndd.water(b, ampl_x=2.0, ampl_y=1.5),
}  # fmt: skip


def _run(fn: Callable[[ndd.Batch], ndd.Batch], images: list[np.ndarray]) -> list[np.ndarray]:
    out = fn(ndd.as_batch(images, layout="HWC").gpu()).cpu()
    return [np.asarray(s) for s in out]


def _same(a: list[np.ndarray], b: list[np.ndarray], what: str) -> None:
    assert len(a) == len(b), what
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        assert x.dtype == y.dtype, f"{what}, sample {i}"
        assert x.shape == y.shape, f"{what}, sample {i}"
        np.testing.assert_array_equal(x, y, err_msg=f"{what}, sample {i}")


@pytest.mark.parametrize("name", sorted(CALLS))
def test_replay_gives_what_the_kernel_gives(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Same shapes and arguments, new data each call: miss, record, then replays."""
    fn = CALLS[name]
    data = [_images(seed) for seed in range(4)]
    monkeypatch.setattr(launch_memo, "ENABLED", False)
    expected = [_run(fn, d) for d in data]
    monkeypatch.setattr(launch_memo, "ENABLED", True)
    launch_memo.clear()
    for rnd in range(2):
        for k, d in enumerate(data):
            _same(_run(fn, d), expected[k], f"{name}, round {rnd}, batch {k}")
    assert launch_memo.stats["recorded"] >= 1, launch_memo.stats
    assert launch_memo.stats["hits"] >= 5, launch_memo.stats


def test_other_arguments_or_shapes_are_other_signatures() -> None:
    """Per-sample argument values and shapes are part of the signature (no stale replay)."""
    flags = [[1, 0, 1], [0, 1, 1], [1, 1, 1]]
    shapes = [SHAPES, [(5, 7, 3), (4, 9, 3), (6, 5, 3)]]
    cases = [(f, s, seed) for seed in range(3) for f in flags for s in shapes]
    launch_memo.clear()
    for f, s, seed in cases:
        images = _images(seed, s)
        got = _run(lambda b, f=f: ndd.flip(b, horizontal=_per_sample(f)), images)
        want = [img[:, ::-1] if flag else img for img, flag in zip(images, f, strict=True)]
        _same(got, want, f"flags {f}, shapes {s}, seed {seed}")
    assert launch_memo.stats["hits"] >= 6, launch_memo.stats


def test_aliased_inputs_are_not_memoised() -> None:
    """`x + x` and `x + y` have the same metadata; a replay of one for the other would read the
    wrong buffer, so calls whose buffers share memory are never memoised."""
    launch_memo.clear()
    for seed in range(3):
        a, b = _images(seed), _images(seed + 10)
        x, y = ndd.as_batch(a, layout="HWC").gpu(), ndd.as_batch(b, layout="HWC").gpu()
        for got, want in (((x + x).cpu(), [p + p for p in a]), ((x + y).cpu(),
                          [p + q for p, q in zip(a, b, strict=True)])):  # fmt: skip
            _same([np.asarray(s) for s in got], want, f"seed {seed}")


def test_disabled_by_environment_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(launch_memo, "ENABLED", False)
    launch_memo.clear()
    for seed in range(3):
        _run(CALLS["flip"], _images(seed))
    assert launch_memo.stats["hits"] == launch_memo.stats["recorded"] == 0


def test_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Least recently used entries go first; the kept table bytes stay under the limit."""
    monkeypatch.setattr(launch_memo, "RECORD_AT_FIRST_SIGHT", True)
    monkeypatch.setattr(launch_memo, "MAX_ENTRIES", 3)
    launch_memo.clear()
    for w in range(5, 11):
        _run(CALLS["flip"], _images(0, [(4, w, 3)] * 3))
    assert len(launch_memo._entries) == 3
    assert launch_memo._bytes == sum(e.nbytes for e in launch_memo._entries.values())


def _first_case_per_op() -> list[golden.Case]:
    seen: dict[str, golden.Case] = {}
    for case in CASES:
        seen.setdefault(case.op, case)
    return list(seen.values())


def _replayable(case: golden.Case) -> bool:
    fn = case.resolve_op(ndd) if not case.op.startswith("__") else None
    schema = getattr(fn, "_schema", None)
    if schema is None or "gpu" not in schema.devices:
        return False
    return bool(lookup(schema, "gpu").replay)


REPLAYED = [c for c in _first_case_per_op() if _replayable(c)]


@pytest.mark.parametrize("case", REPLAYED, ids=lambda c: c.id)
def test_golden_case_replayed(case: golden.Case, monkeypatch: pytest.MonkeyPatch) -> None:
    """One golden case of every op with a replayable GPU kernel: recorded on the first call,
    replayed on the second; both match DALI's output."""
    monkeypatch.setattr(launch_memo, "RECORD_AT_FIRST_SIGHT", True)
    launch_memo.clear()
    for _ in range(2):
        case.check(run_case(case, "gpu"))
    assert launch_memo.stats["hits"] >= 1, (case.id, launch_memo.stats)


class _FakeCompiled:
    """Stands for the compiled kernel a real GPU's launch returns: relaunching it runs the
    interpreted kernel with the replay's bound arguments (every parameter by position)."""

    def __init__(self, kernel: object) -> None:
        self.kernel = kernel
        self.relaunches = 0

    def __getitem__(self, grid: tuple[int, ...]) -> Callable[..., None]:
        assert len(grid) == 3

        def runner(*bound: object) -> None:
            from ndd_triton.kernels.gpu._tables import LAUNCH_OPTIONS

            self.relaunches += 1
            self.kernel[grid](*bound, **LAUNCH_OPTIONS)  # type: ignore[index]

        return runner


@pytest.mark.parametrize("name", ["flip", "crop_mirror_normalize", "resize", "gaussian_blur",
                                  "rotate", "add_self_other"])  # fmt: skip
def test_replays_relaunch_the_compiled_kernel_with_every_parameter_in_order(
        name: str, monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """On a real GPU a replay relaunches the kernel Triton compiled for the recorded launch
    (`GpuRun.launch_compiled`): its arguments, constexprs and defaults bound by position."""
    from ndd_triton.kernels.gpu import _replay
    from ndd_triton.kernels.gpu._tables import GpuRun

    fn = CALLS[name]
    data = [_images(seed) for seed in range(3)]
    monkeypatch.setattr(launch_memo, "ENABLED", False)
    expected = [_run(fn, d) for d in data]
    monkeypatch.setattr(launch_memo, "ENABLED", True)
    fakes: list[_FakeCompiled] = []
    plain = GpuRun.launch_device

    def launch_device(self, kernel, grid, args, meta):  # type: ignore[no-untyped-def]
        plain(self, kernel, grid, args, meta)
        fakes.append(_FakeCompiled(kernel))
        return fakes[-1]

    monkeypatch.setattr(GpuRun, "launch_device", launch_device)
    launch_memo.clear()
    for rnd in range(2):
        for k, d in enumerate(data):
            _same(_run(fn, d), expected[k], f"{name}, round {rnd}, batch {k}")
    assert launch_memo.stats["hits"] >= 3, launch_memo.stats
    assert sum(f.relaunches for f in fakes) >= launch_memo.stats["hits"]
    # a rebuilt pointer aligned otherwise than when recorded: the plain launch path
    monkeypatch.setattr(_replay._Direct, "fits", lambda self, args: False)
    before = sum(f.relaunches for f in fakes)
    _same(_run(fn, data[0]), expected[0], f"{name}, misaligned")
    assert sum(f.relaunches for f in fakes) == before
