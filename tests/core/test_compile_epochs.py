"""Compile mode across epochs: a reader's next compiled epoch reuses the program of the last
one (iteration 0 issued ahead too, not traced eagerly), re-traces silently when the loop body
changed, and every epoch gives eager mode's bytes and leaves the RNGs where eager mode does."""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
import pytest

import ndd_triton as ndd
from ndd_triton.runtime.compiled import CompileFallbackWarning

BS = 2
FILES = 7  # 4 iterations per epoch (the reader fills the last batch)


def _folder(tmp_path) -> str:
    root = tmp_path / "0"
    root.mkdir()
    for i in range(FILES):
        (root / f"{i}.jpg").write_bytes(bytes(range(i + 3, 2 * i + 9)))
    return str(tmp_path)


def _body(variant: str) -> Callable[[ndd.Batch], ndd.Batch]:
    """Three calls drawing random numbers; the variants differ at call 1, or have one call more
    or one fewer."""
    def body(files: ndd.Batch) -> ndd.Batch:
        n = files.batch_size
        x = ndd.cast(files, dtype=ndd.float32)
        scale = 0.5 if variant == "other_constant" else 2.0
        x = ndd.noise.gaussian(x, stddev=scale)  # call 1
        if variant != "fewer":
            x = x * ndd.random.uniform(batch_size=n, range=[0.5, 1.5])
        if variant == "more":
            x = ndd.noise.gaussian(x, stddev=1.0)
        return x

    return body


def _epochs(root: str, variants: list[str], compile_: bool) -> tuple[list, list, list]:
    """Every epoch's outputs (per iteration, per sample), the default RNG's state after each
    epoch, and the compiled epochs' iterators."""
    ndd.random.set_seed(5)
    reader = ndd.readers.File(file_root=root, random_shuffle=True, seed=3)
    outs, states, epochs = [], [], []
    for variant in variants:
        body = _body(variant)
        it = reader.next_epoch(batch_size=BS, compile=compile_)
        outs.append([[np.array(s) for s in body(files)] for files, _ in it])
        states.append(str(ndd.random.get_default_rng().state))
        epochs.append(it)
    return outs, states, epochs


def _same(a: list, b: list) -> None:
    assert len(a) == len(b)
    for ea, eb in zip(a, b, strict=True):
        assert len(ea) == len(eb)
        for xa, xb in zip(ea, eb, strict=True):
            for sa, sb in zip(xa, xb, strict=True):
                assert sa.dtype == sb.dtype and sa.shape == sb.shape
                np.testing.assert_array_equal(sa, sb)


def test_the_next_epoch_reuses_the_program(tmp_path) -> None:
    root = _folder(tmp_path)
    variants = ["same"] * 3
    eager, eager_states, _ = _epochs(root, variants, False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileFallbackWarning)
        compiled, states, epochs = _epochs(root, variants, True)
    _same(eager, compiled)
    assert states == eager_states
    first, *later = [it.session for it in epochs]
    assert not first.reused and first.finished
    calls = len(first.program)
    assert calls == 4  # cast, gaussian, uniform, mul
    assert first.replayed == calls * 3  # iteration 0 traced
    for session in later:
        assert session.reused and session.finished
        assert session.program is first.program  # not traced again
        assert session.replayed == calls * 4  # iteration 0 replayed too


def test_a_complete_epoch_is_reused(tmp_path) -> None:
    """Epochs without a partial batch end in compile mode: the next one reuses the program."""
    root = tmp_path / "0"
    root.mkdir()
    for i in range(6):
        (root / f"{i}.jpg").write_bytes(bytes(range(i + 2, 2 * i + 7)))
    eager, eager_states, _ = _epochs(str(tmp_path), ["same"] * 3, False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileFallbackWarning)
        compiled, states, epochs = _epochs(str(tmp_path), ["same"] * 3, True)
    _same(eager, compiled)
    assert states == eager_states
    sessions = [it.session for it in epochs]
    assert [s.reused for s in sessions] == [False, True, True]
    assert [s.replayed for s in sessions] == [4 * 2, 4 * 3, 4 * 3]
    assert all(s.finished for s in sessions)


@pytest.mark.parametrize("variant", ["other_constant", "more"])
def test_a_changed_loop_body_is_traced_again_without_a_warning(tmp_path, variant: str) -> None:
    root = tmp_path / "0"
    root.mkdir()
    for i in range(6):
        (root / f"{i}.jpg").write_bytes(bytes(range(i + 2, 2 * i + 7)))
    variants = ["same", variant, variant]
    eager, eager_states, _ = _epochs(str(tmp_path), variants, False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileFallbackWarning)
        compiled, states, epochs = _epochs(str(tmp_path), variants, True)
    _same(eager, compiled)
    assert states == eager_states
    first, changed, again = [it.session for it in epochs]
    assert changed.program is not first.program
    assert len(changed.program) == len(first.program) + (variant == "more")
    matched = 1 if variant == "other_constant" else len(first.program)  # before the change
    assert changed.replayed == matched + len(changed.program) * 2
    assert again.program is changed.program and again.replayed == len(again.program) * 3


def _rng_per_epoch(root: str, compile_: bool, epochs: int = 3) -> tuple[list, list, list]:
    """Every epoch's outputs with a loop body that makes its RNG anew each epoch (as
    examples/detection.py's `detection_batches` does), the number of `cast` runs (the call
    before the first random one) and the epochs' sessions."""
    ndd.random.set_seed(5)
    reader = ndd.readers.File(file_root=root, random_shuffle=True, seed=3)
    outs, sessions = [], []
    with ndd.profile() as prof:
        for epoch in range(epochs):
            rng = ndd.random.RNG(seed=10 + epoch)
            it = reader.next_epoch(batch_size=BS, compile=compile_)
            for files, _ in it:
                x = ndd.cast(files, dtype=ndd.float32)
                x = ndd.noise.gaussian(x, stddev=2.0, rng=rng)
                x = x * ndd.random.uniform(batch_size=files.batch_size, range=[0.5, 1.5])
                outs.append([np.array(s) for s in x])
            sessions.append(getattr(it, "session", None))
    casts = [r for r in prof.records if r.op == "cast" and r.run_s is not None]
    return outs, [len(casts), str(ndd.random.get_default_rng().state)], sessions


def test_an_rng_made_anew_each_epoch_wastes_no_work(tmp_path) -> None:
    """The reused program reads its RNG object by identity, so the next epoch's new RNG makes
    it re-trace at the first random call. Until then the iterations read ahead were issued only
    up to that call: nothing issued ahead is thrown away (each batch is cast once, not once
    more per re-trace) and the calls before it stay issued ahead."""
    root = _folder(tmp_path)
    eager, (eager_casts, eager_state), _ = _rng_per_epoch(root, False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileFallbackWarning)
        compiled, (casts, state), sessions = _rng_per_epoch(root, True)
    _same([eager], [compiled])
    assert state == eager_state
    # epochs x iterations; compile mode also cast the next epoch's first compile_depth + 1
    # batches after the last epoch (a fourth epoch would have started with them)
    assert casts - 3 == eager_casts == 3 * 4
    first, *later = sessions
    calls = len(first.program)
    for session in later:
        assert session.finished and not session.reused  # traced again in iteration 0
        assert session.program is not first.program and len(session.program) == calls
        assert session.replayed == 1 + calls * 3  # iteration 0's cast came from the program


def test_a_reused_program_is_issued_ahead_past_its_rng_once_confirmed(tmp_path) -> None:
    """The same RNG object every epoch: iteration 0 confirms the reused program at its first
    random call, and every call of every iteration comes from the program (as before the
    barrier existed), with eager mode's bytes and RNG states."""
    root = _folder(tmp_path)
    rng_seeds = []

    def run(compile_: bool) -> tuple[list, list]:
        ndd.random.set_seed(5)
        rng = ndd.random.RNG(seed=11)
        reader = ndd.readers.File(file_root=root, random_shuffle=True, seed=3)
        outs, sessions = [], []
        for _ in range(3):
            it = reader.next_epoch(batch_size=BS, compile=compile_)
            for files, _ in it:
                x = ndd.noise.gaussian(ndd.cast(files, dtype=ndd.float32), stddev=2.0, rng=rng)
                outs.append([np.array(s) for s in x])
            sessions.append(getattr(it, "session", None))
        rng_seeds.append(str(rng.state))
        return outs, sessions

    eager, _ = run(False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileFallbackWarning)
        compiled, sessions = run(True)
    _same([eager], [compiled])
    assert rng_seeds[0] == rng_seeds[1]
    assert [s.reused for s in sessions] == [False, True, True]
    assert [s.replayed for s in sessions] == [2 * 3, 2 * 4, 2 * 4]


def test_fewer_calls_than_the_reused_program_fall_back_with_a_warning(tmp_path) -> None:
    root = tmp_path / "0"
    root.mkdir()
    for i in range(6):
        (root / f"{i}.jpg").write_bytes(bytes(range(i + 2, 2 * i + 7)))
    variants = ["same", "fewer"]
    eager, eager_states, _ = _epochs(str(tmp_path), variants, False)
    with pytest.warns(CompileFallbackWarning, match="iteration 0 ended after 2 calls"):
        compiled, states, _ = _epochs(str(tmp_path), variants, True)
    _same(eager, compiled)
    assert states == eager_states


def test_another_batch_size_or_depth_traces_again(tmp_path) -> None:
    root = tmp_path / "0"
    root.mkdir()
    for i in range(6):
        (root / f"{i}.jpg").write_bytes(bytes(range(i + 2, 2 * i + 7)))
    reader = ndd.readers.File(file_root=str(tmp_path))
    sessions = []
    for depth in (2, 2, 1):
        it = reader.next_epoch(batch_size=BS, compile=True, compile_depth=depth)
        for files, _ in it:
            ndd.cast(files, dtype=ndd.float32).evaluate()
        sessions.append(it.session)
    assert [s.reused for s in sessions] == [False, True, False]


def test_a_reused_gpu_program_keeps_its_fused_pass(tmp_path) -> None:
    """The RN50 chain on the GPU across two epochs: the second epoch's iteration 0 runs the
    fused resample + normalise pass of the reused program; eager mode's bytes."""
    import io

    from PIL import Image

    root = tmp_path / "0"
    root.mkdir()
    gen = np.random.default_rng(4)
    for i in range(4):
        buf = io.BytesIO()
        Image.fromarray(gen.integers(0, 256, (9 + i, 12, 3), dtype=np.uint8)).save(buf, "JPEG")
        (root / f"{i}.jpg").write_bytes(buf.getvalue())

    def run(compile_: bool) -> tuple[list, list]:
        ndd.random.set_seed(8)
        reader = ndd.readers.File(file_root=str(tmp_path))
        outs, epochs = [], []
        with ndd.profile() as prof:
            for _ in range(2):
                it = reader.next_epoch(batch_size=BS, compile=compile_)
                for jpegs, _ in it:
                    x = ndd.random_resized_crop(ndd.decoders.image(jpegs, device="gpu"),
                                                size=(5, 6))  # fmt: skip
                    x = ndd.flip(x, horizontal=ndd.random.coin_flip(batch_size=BS))
                    x = ndd.crop_mirror_normalize(x, mean=[1.0, 2.0, 3.0], std=[2.0, 3.0, 4.0])
                    outs.append([np.array(s) for s in x.cpu()])
                epochs.append(it)
        return outs, [epochs, prof]

    eager, _ = run(False)
    compiled, (epochs, prof) = run(True)
    _same([eager], [compiled])
    assert [it.session.reused for it in epochs] == [False, True]
    # epoch 1: iteration 1 compiled; epoch 2: iterations 0 and 1
    assert len(prof.compiled) == 3
    for it in prof.compiled:
        assert ("random_resized_crop", "flip", "crop_mirror_normalize") in [g.ops for g in it.groups]


def test_a_colour_chain_around_a_per_epoch_rng_is_issued_once(tmp_path) -> None:
    """A colour chain whose first random draw sits between its members (the reused program's
    barrier inside a fusion group) with an RNG made anew each epoch: every batch's chain runs
    once (its first member prepared ahead, fused after the draw), eager mode's bytes."""
    root = tmp_path / "0"
    root.mkdir()
    gen = np.random.default_rng(6)
    for i in range(FILES):
        np.save(root / f"{i}.npy", gen.integers(0, 256, (5 + i % 3, 7, 3), dtype=np.uint8))

    def run(compile_: bool) -> tuple[list, list]:
        ndd.random.set_seed(8)
        reader = ndd.readers.Numpy(file_root=str(root), random_shuffle=True, seed=2)
        outs = []
        with ndd.profile() as prof:
            for epoch in range(3):
                rng = ndd.random.RNG(seed=20 + epoch)
                for (x,) in reader.next_epoch(batch_size=BS, compile=compile_):
                    x = ndd.brightness(x, brightness=1.2)
                    contrast = ndd.random.uniform(batch_size=x.batch_size, range=[0.5, 1.5],
                                                  rng=rng)  # fmt: skip
                    x = ndd.contrast(x, contrast=contrast)
                    outs.append([np.array(s) for s in x])
        runs = [r.op for r in prof.records if r.op.startswith("brightness") and
                r.run_s is not None]  # fmt: skip
        return outs, runs

    eager, eager_runs = run(False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileFallbackWarning)
        compiled, runs = run(True)
    _same([eager], [compiled])
    assert len(eager_runs) == 3 * 4
    # iteration 0 of epochs 1 and 2 re-traces after its prepared brightness (computed when the
    # traced contrast reads it: a lazy run, not profiled); every other batch runs fused once
    assert runs.count("brightness+contrast") == 3 * 4 - 1 - 2 and len(runs) == 3 * 4 - 2
