"""Compile mode (`next_epoch(compile=True)`, `ExternalSource.captured`): the traced program is
issued ahead and gives the bytes eager mode gives, on both backends; a differing call falls
back to eager with one warning and the results stay those of eager mode."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import ndd_triton as ndd
from ndd_triton.runtime.compiled import CompileFallbackWarning

BS = 3
ITERATIONS = 4


def _images(seed: int, iterations: int = ITERATIONS) -> list[list[np.ndarray]]:
    """Ragged uint8 HWC batches (odd sizes)."""
    gen = np.random.default_rng(seed)
    def image() -> np.ndarray:
        shape = (int(gen.integers(4, 8)), int(gen.integers(4, 8)), 3)
        return gen.integers(0, 256, shape, dtype=np.uint8)

    return [[image() for _ in range(BS)] for _ in range(iterations)]


def _uniform(lo: float, hi: float) -> ndd.Batch:
    return ndd.random.uniform(batch_size=BS, range=[lo, hi])


# name -> step(x, constants): every step keeps an HWC image (cmn, last only, makes CHW float)
_CONTRAST = np.array([0.7, 1.0, 1.3], np.float32)
STEPS = {
    "brightness": lambda x: ndd.brightness(x, brightness=_uniform(0.5, 1.5)),
    "contrast": lambda x: ndd.contrast(x, contrast=ndd.as_batch(list(_CONTRAST))),  # by content
    "hue": lambda x: ndd.hue(x, hue=_uniform(-40.0, 40.0)),
    "saturation": lambda x: ndd.saturation(x, saturation=1.3),
    "color_twist": lambda x: ndd.color_twist(
        x, brightness=1.1, contrast=_uniform(0.8, 1.2), hue=12.0, saturation=0.8
    ),
    "flip": lambda x: ndd.flip(x, horizontal=ndd.random.coin_flip(batch_size=BS)),
    "crop": lambda x: ndd.crop(
        x, crop=(3, 4), crop_pos_x=_uniform(0.0, 1.0), crop_pos_y=_uniform(0.0, 1.0)
    ),
    "gaussian": lambda x: ndd.noise.gaussian(x, stddev=6.0),
    "resize": lambda x: ndd.resize(x, resize_x=5, resize_y=4),
    "rotate": lambda x: ndd.rotate(x, angle=_uniform(-20.0, 20.0)),
    # an arithmetic chain that keeps uint8 (NumPy scalars keep their dtype; + wraps)
    "bits": lambda x: ((x >> np.uint8(1)) + np.uint8(60)) ^ np.uint8(15),
}
LAST = {
    "cmn": lambda x: ndd.crop_mirror_normalize(
        x,
        mean=[10.0, 20.0, 30.0],
        std=[2.0, 3.0, 4.0],
        mirror=ndd.random.coin_flip(batch_size=BS),
        dtype=ndd.float32,
    ),
    "scale": lambda x: x * 0.5,
}


def _chains(count: int, seed: int, steps: dict | None = None, last: dict | None = None
            ) -> list[list[str]]:  # fmt: skip
    """`count` chains of 2-5 step names (`steps`, default STEPS), the last one replaced by a
    final step (`last`, default LAST) in 40% of them."""
    steps, last = steps or STEPS, last or LAST
    gen = np.random.default_rng(seed)
    names = sorted(steps)
    chains = []
    for _ in range(count):
        length = int(gen.integers(2, 6))
        chain = [names[int(k)] for k in gen.integers(0, len(names), length)]
        if gen.random() < 0.4:
            chain[-1] = sorted(last)[int(gen.integers(0, len(last)))]
        chains.append(chain)
    return chains


def _body(chain: list[str], x: ndd.Batch, steps: dict | None = None,
          last: dict | None = None) -> ndd.Batch:  # fmt: skip
    steps, last = steps or STEPS, last or LAST
    for name in chain:
        x = (steps.get(name) or last[name])(x)
    return x


def _epoch(data: list[list[np.ndarray]], device: str, compile_: bool, depth: int = 2) -> object:
    batches = [ndd.as_batch(d, layout="HWC", device=device) for d in data]
    if compile_:
        source = ndd.ExternalSource(iter(batches), device=device)
        return source.captured(BS, compile_depth=depth)
    return iter(batches)


def _run(chain: list[str], data: list[list[np.ndarray]], device: str, compile_: bool,
         depth: int = 2, body: object = None) -> tuple[list[list[np.ndarray]], object]:  # fmt: skip
    """Outputs of every iteration (and the default RNG's state after the epoch, appended)."""
    ndd.random.set_seed(1234)
    epoch = _epoch(data, device, compile_, depth)
    outs: list = []
    for x in epoch:
        y = body(x) if body is not None else _body(chain, x)  # type: ignore[operator]
        outs.append([np.array(s) for s in y.cpu()])
    outs.append([np.frombuffer(str(ndd.random.get_default_rng().state).encode(), np.uint8)])
    return outs, epoch


def _same(a: list[list[np.ndarray]], b: list[list[np.ndarray]], where: str) -> None:
    assert len(a) == len(b), where
    for k, (xa, xb) in enumerate(zip(a, b, strict=True)):
        for i, (sa, sb) in enumerate(zip(xa, xb, strict=True)):
            assert sa.dtype == sb.dtype, (where, k, i)
            assert sa.shape == sb.shape, (where, k, i)
            assert np.array_equal(sa, sb, equal_nan=True), (where, k, i)


CHAINS = _chains(10, seed=18)


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
@pytest.mark.parametrize("chain", [*CHAINS[:5], ["bits", "hue", "bits", "scale"],
                                   ["crop", "flip", "rotate", "flip", "cmn"],
                                   ["flip", "rotate", "flip"]], ids="-".join)  # fmt: skip
def test_compiled_chain_is_bit_identical_to_eager(chain: list[str], backend: str) -> None:
    data = _images(len(chain) * 7 + len(chain[0]))
    eager, _ = _run(chain, data, backend, False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileFallbackWarning)
        compiled, epoch = _run(chain, data, backend, True)
    _same(eager, compiled, "compiled vs eager")
    session = epoch.session  # type: ignore[attr-defined]
    assert session.fallback_reason is None
    calls = len(session.program)
    assert calls >= len(chain)
    assert session.replayed == calls * (ITERATIONS - 1)  # every later call came from the program


def test_a_host_to_gpu_transfer_in_the_loop_is_traced_and_issued_ahead() -> None:
    """`.gpu()` between CPU work and GPU ops (a CPU decode feeding GPU augmentations) is part
    of the program: no fallback, every call replayed, eager mode's bytes."""
    def body(x: ndd.Batch) -> ndd.Batch:
        x = ndd.brightness(x, brightness=_uniform(0.5, 1.5)).gpu()  # a cpu op, then the copy
        return ndd.flip(x, horizontal=ndd.random.coin_flip(batch_size=BS))

    data = _images(5)
    eager, _ = _run([], data, "cpu", False, body=body)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileFallbackWarning)
        compiled, epoch = _run([], data, "cpu", True, body=body)
    _same(eager, compiled, "compiled vs eager")
    session = epoch.session  # type: ignore[attr-defined]
    assert [rec.name for rec in session.program] == ["random.uniform", "brightness", "copy",
                                                     "random.coin_flip", "flip"]  # fmt: skip
    assert session.replayed == len(session.program) * (ITERATIONS - 1)


@pytest.mark.parametrize("chain", CHAINS[5:], ids="-".join)
def test_more_compiled_chains_cpu(chain: list[str]) -> None:
    data = _images(len(chain) * 11)
    eager, _ = _run(chain, data, "cpu", False)
    compiled, epoch = _run(chain, data, "cpu", True, depth=1)
    _same(eager, compiled, "compiled vs eager")
    assert epoch.session.replayed == len(epoch.session.program) * (ITERATIONS - 1)  # type: ignore[attr-defined]


@pytest.mark.parametrize("depth", [0, 1, 4])
def test_prefetch_depth(depth: int) -> None:
    chain = ["brightness", "gaussian", "flip"]
    data = _images(3)
    eager, _ = _run(chain, data, "cpu", False)
    compiled, epoch = _run(chain, data, "cpu", True, depth=depth)
    _same(eager, compiled, f"depth {depth}")
    assert epoch.session.replayed == len(epoch.session.program) * (ITERATIONS - 1)  # type: ignore[attr-defined]


def _branchy(switch_at: int, kind: str):
    """A loop body whose calls change from iteration `switch_at` on (`kind` says how)."""
    state = {"k": 0}

    def body(x: ndd.Batch) -> ndd.Batch:
        changed = state["k"] >= switch_at
        state["k"] += 1
        x = ndd.brightness(x, brightness=1.2)  # call 0
        if kind == "op" and changed:
            x = ndd.hue(x, hue=10.0)  # call 1: the trace has flip
        x = ndd.flip(x, horizontal=0 if kind == "constant" and changed else 1)
        x = ndd.noise.gaussian(x, stddev=3.0)
        if not (kind == "missing" and changed):
            x = ndd.contrast(x, contrast=_uniform(0.5, 1.5))
        if kind == "extra" and changed:
            x = ndd.flip(x, horizontal=1)
        return x

    return body


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
@pytest.mark.parametrize("kind", ["op", "constant", "missing", "extra"])
def test_fallback_is_eager_with_one_warning(kind: str, backend: str) -> None:
    data = _images(5)
    eager, _ = _run([], data, backend, False, body=_branchy(2, kind))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled, epoch = _run([], data, backend, True, body=_branchy(2, kind))
    _same(eager, compiled, f"fallback ({kind})")
    fallbacks = [w for w in caught if issubclass(w.category, CompileFallbackWarning)]
    assert len(fallbacks) == 1, [str(w.message) for w in caught]
    message = str(fallbacks[0].message)
    assert "iteration 2" in message, message
    assert "runs eagerly" in message, message
    expected = {"op": "call 1 ('hue')", "constant": "argument 'horizontal' is 0",
                "missing": "ended after 3 calls", "extra": "call 5 is 'flip'"}[kind]  # fmt: skip
    assert expected in message, message
    assert fallbacks[0].filename == __file__  # it points at the caller's line
    assert epoch.session.fallback_reason is not None  # type: ignore[attr-defined]


def test_breaking_out_restores_the_rng() -> None:
    chain = ["brightness", "gaussian"]
    data = _images(9)
    ndd.random.set_seed(5)
    for k, x in enumerate(_epoch(data, "cpu", False)):
        _body(chain, x)
        if k == 1:
            break
    expected = str(ndd.random.get_default_rng().state)
    ndd.random.set_seed(5)
    epoch = _epoch(data, "cpu", True, depth=3)
    for k, x in enumerate(epoch):
        _body(chain, x)
        if k == 1:
            break
    epoch.close()  # type: ignore[attr-defined]
    assert str(ndd.random.get_default_rng().state) == expected


def test_external_batch_made_in_the_loop() -> None:
    """A per-sample argument built in the loop is compared by content: equal content replays,
    other content falls back (naming the argument)."""
    data = _images(4)
    state = {"k": 0, "switch": 99}

    def body(x: ndd.Batch) -> ndd.Batch:
        state["k"] += 1
        value = np.float32(1.5 if state["k"] <= state["switch"] else 0.5)
        return ndd.brightness(x, brightness=ndd.as_batch([value] * BS))

    eager, _ = _run([], data, "cpu", False, body=body)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileFallbackWarning)
        compiled, epoch = _run([], data, "cpu", True, body=body)  # iterations 1-5: 1.5
    _same(eager, compiled, "external argument")
    assert epoch.session.replayed == ITERATIONS - 1  # type: ignore[attr-defined]
    state["k"], state["switch"] = 0, 2
    eager, _ = _run([], data, "cpu", False, body=body)  # 1.5 until iteration 2, then 0.5
    state["k"] = 0
    with pytest.warns(CompileFallbackWarning, match="argument 'brightness' is Batch"):
        compiled, _ = _run([], data, "cpu", True, body=body)
    _same(eager, compiled, "external argument")


def test_nothing_traced_warns_like_dali() -> None:
    source = ndd.ExternalSource(iter([np.array([1]), np.array([2])]))
    with pytest.warns(CompileFallbackWarning, match="no operators were called"):
        values = [np.asarray(b).tolist() for b in source.captured(2)]
    assert values == [[[1], [1]], [[2], [2]]]


def test_api_errors(tmp_path) -> None:
    root = tmp_path / "0"
    root.mkdir()
    for i in range(4):
        (root / f"{i}.jpg").write_bytes(bytes([i]))
    with pytest.raises(ValueError, match="capture=True requires a non-None batch_size"):
        ndd.readers.File(file_root=str(tmp_path)).next_epoch(compile=True)
    with pytest.raises(ValueError, match="capture=True requires a non-None batch_size"):
        ndd.readers.File(file_root=str(tmp_path)).next_epoch(capture=True)
    with pytest.raises(ValueError, match="'compile_depth' must be >= 0"):
        ndd.readers.File(file_root=str(tmp_path)).next_epoch(batch_size=2, compile=True,
                                                            compile_depth=-1)  # fmt: skip
    checkpointed = ndd.readers.File(file_root=str(tmp_path), enable_checkpointing=True)
    for keyword in ("compile", "capture"):
        with pytest.raises(NotImplementedError,
                           match=r"^Checkpointing is currently not supported in capture mode\.$"):
            checkpointed.next_epoch(batch_size=2, **{keyword: True})
    with pytest.raises(ValueError, match="requires a non-None batch_size"):
        ndd.ExternalSource(iter([1])).captured(None)  # type: ignore[arg-type]


def test_reader_epoch_compiles(tmp_path) -> None:
    root = tmp_path / "0"
    root.mkdir()
    for i in range(8):
        (root / f"{i}.jpg").write_bytes(bytes(range(i + 3)))

    def epoch(compile_: bool) -> tuple[list[list[np.ndarray]], object]:
        ndd.random.set_seed(3)
        reader = ndd.readers.File(file_root=str(tmp_path), random_shuffle=True, seed=9)
        it = reader.next_epoch(batch_size=2, compile=compile_)
        out = []
        for files, _labels in it:
            y = ndd.noise.gaussian(ndd.cast(files, dtype=ndd.float32), stddev=2.0) + 1.0
            out.append([np.array(s) for s in y])
        return out, it

    eager, _ = epoch(False)
    compiled, it = epoch(True)
    _same(eager, compiled, "reader")
    assert it.session.replayed == 3 * 3  # type: ignore[attr-defined]


@pytest.mark.parametrize("mode", ["eager", "sync_cpu"])
def test_errors_surface_where_eager_mode_raises_them(mode: str) -> None:
    """A data-dependent error in iteration 2 (a crop window beyond a small image) surfaces at the
    same place as in eager mode: the read (eager) or the call (sync_cpu)."""
    data = _images(21)
    data[2][1] = np.zeros((2, 2, 3), np.uint8)  # too small for the 3x3 crop below

    def run(compile_: bool) -> list[int]:
        done = []
        with getattr(ndd.EvalMode, mode):
            for k, x in enumerate(_epoch(data, "cpu", compile_)):
                try:
                    y = ndd.crop(ndd.brightness(x, brightness=1.5), crop=(3, 3),
                                 out_of_bounds_policy="error")  # fmt: skip
                    np.asarray(y.cpu().select(0))
                except (ValueError, RuntimeError) as error:
                    done.append((k, type(error).__name__))
                    continue
                done.append((k, "ok"))
        return done

    eager = run(False)
    assert eager[2][1] != "ok"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled = run(True)
    assert compiled == eager
    fallbacks = [w for w in caught if issubclass(w.category, CompileFallbackWarning)]
    assert len(fallbacks) == (1 if mode == "sync_cpu" else 0), [str(w.message) for w in caught]
