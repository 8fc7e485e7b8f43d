"""Compile mode between epochs: when an epoch's source ends, the reader's next epoch's first
batches are taken and their calls before the program's first random one are issued, so they
run while the caller finishes the epoch; the next compiled epoch of the same program adopts
them, any other epoch gets the same batches from the reader. Eager mode's bytes throughout."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from test_compile_epochs import BS, _folder, _same

import ndd_triton as ndd
from ndd_triton.runtime.compiled import DEFAULT_DEPTH, CompileFallbackWarning

ITERATIONS = 4  # per epoch: _folder's 7 files in batches of BS = 2 (the reader fills the last)

def _body(files: ndd.Batch, dtype=ndd.float32) -> list[np.ndarray]:
    x = ndd.cast(files, dtype=dtype)  # the calls before the first random one: issued ahead
    x = ndd.noise.gaussian(x, stddev=2.0)
    x = x * ndd.random.uniform(batch_size=files.batch_size, range=[0.5, 1.5])
    return [np.array(s) for s in x]


def _run(root: str, modes: list[bool], dtypes: list | None = None) -> tuple[list, str, list]:
    """Outputs of each epoch (`modes`: compile or not), the default RNG's final state and the
    compiled epochs' sessions."""
    ndd.random.set_seed(7)
    reader = ndd.readers.File(file_root=root, random_shuffle=True, seed=3)
    outs, sessions = [], []
    for k, compile_ in enumerate(modes):
        dtype = dtypes[k] if dtypes else ndd.float32
        it = reader.next_epoch(batch_size=BS, compile=compile_)
        outs.append([_body(files, dtype) for files, _ in it])
        sessions.append(getattr(it, "session", None))
    return outs, str(ndd.random.get_default_rng().state), sessions


def test_the_next_epoch_starts_with_batches_issued_ahead(tmp_path) -> None:
    root = _folder(tmp_path)
    eager, eager_state, _ = _run(root, [False] * 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileFallbackWarning)
        compiled, state, sessions = _run(root, [True] * 3)
    _same(eager, compiled)
    assert state == eager_state
    assert sessions[0].adopted == 0
    for session in sessions[1:]:
        assert session.adopted == DEFAULT_DEPTH + 1 and session.finished and session.reused
    # the last epoch issued the next one's casts too (a fourth epoch would adopt them)
    assert len(sessions[-1].next_epoch) == DEFAULT_DEPTH + 1


def test_the_calls_issued_ahead_are_the_next_epochs_results(tmp_path) -> None:
    """The casts of the next epoch's first batches are issued when this epoch's source ends
    (before its last iterations are done) and are the results its calls get."""
    root = _folder(tmp_path)
    reader = ndd.readers.File(file_root=root, random_shuffle=True, seed=3)
    it = reader.next_epoch(batch_size=BS, compile=True)
    for k, (files, _) in enumerate(it):
        _body(files)
        ahead = it.session.next_epoch
        assert len(ahead) == (DEFAULT_DEPTH + 1 if k >= ITERATIONS - DEFAULT_DEPTH else 0)
    casts = [issued.refs.results[0] for _, issued in ahead]
    for cast in casts:
        cast.evaluate()  # computed on the executor: nothing of the next epoch has started
    nxt = reader.next_epoch(batch_size=BS, compile=True)
    got = []
    for files, _ in nxt:
        got.append(ndd.cast(files, dtype=ndd.float32))
        x = ndd.noise.gaussian(got[-1], stddev=2.0)
        x = x * ndd.random.uniform(batch_size=files.batch_size, range=[0.5, 1.5])
    assert nxt.session.adopted == DEFAULT_DEPTH + 1 and nxt.session.finished
    assert all(a is b for a, b in zip(got, casts, strict=False))


@pytest.mark.parametrize("modes", [[True, False, True], [True, False, False], [False, True, True]])
def test_epochs_of_any_mode_after_a_compiled_one_get_the_same_batches(tmp_path, modes) -> None:
    root = _folder(tmp_path)
    eager, eager_state, _ = _run(root, [False] * len(modes))
    mixed, state, _ = _run(root, modes)
    _same(eager, mixed)
    assert state == eager_state


def test_a_loop_body_changed_before_the_first_random_call_is_traced_again(tmp_path) -> None:
    """The next epoch's first call differs from the program (another cast): the batches issued
    ahead are kept, their calls issued again with the new program, eager mode's bytes."""
    root = _folder(tmp_path)
    dtypes = [ndd.float32, ndd.float64, ndd.float64]
    eager, eager_state, _ = _run(root, [False] * 3, dtypes)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileFallbackWarning)
        compiled, state, sessions = _run(root, [True] * 3, dtypes)
    _same(eager, compiled)
    assert state == eager_state
    assert sessions[1].adopted == DEFAULT_DEPTH + 1 and not sessions[1].reused  # re-traced
    assert sessions[2].adopted == DEFAULT_DEPTH + 1 and sessions[2].reused
