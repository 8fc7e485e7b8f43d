"""ndd.random.RNG (core.md 13.1): Philox bits, state strings, clone/advance, defaults, errors."""

import threading

import numpy as np
import pytest
import torch
import triton
import triton.language as tl
from reference.philox_ref import draw, philox4x32_10

import ndd_triton as ndd
from ndd_triton.core import device as ndd_device
from ndd_triton.kernels.gpu._philox import (
    _helper_mulhi64,
    _helper_philox_draw,
    _helper_philox_draw2,
    _helper_position,
    _helper_unit_f64,
)
from ndd_triton.kernels.gpu._tables import DRAW_WORDS, draw_words
from ndd_triton.random import RNG, RNGState
from ndd_triton.random._philox import bounded_index, draws_u32, philox4x32, to_unit_float64
from ndd_triton.random._philox import mulhi64 as mulhi64_np

# where kernels launched directly by these tests run: the emulated gpu is CPU storage
DEV = "cpu" if ndd_device.is_emulated() else "cuda"

KAT = [  # Random123 known-answer vectors for philox4x32_10
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF, 0xFFFFFFFF), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]  # fmt: skip


@pytest.mark.parametrize(("counter", "key", "expected"), KAT)
def test_reference_philox_known_answers(counter, key, expected):
    assert philox4x32_10(counter, key) == expected


def test_numpy_philox_matches_reference():
    assert tuple(int(v) for v in philox4x32(np.array([0], np.uint64), 0)[0]) == KAT[0][2]
    key = 0xDEADBEEF12345678
    for offset in (0, 3, 4097, (1 << 62) + 5):
        got = draws_u32(key, offset, 9)
        assert [int(v) for v in got] == [draw(key, offset + i) for i in range(9)]


def test_numpy_philox_matches_reference_on_random_blocks_and_keys():
    """Every word of every block against the scalar reference: random 64-bit counters and keys,
    and a run of blocks longer than one pass (`_CHUNK`)."""
    from ndd_triton.random import _philox

    rs = np.random.default_rng(11)
    for _ in range(4):
        key = int(rs.integers(0, 1 << 63)) * 2 + int(rs.integers(0, 2))
        counters = rs.integers(0, 1 << 63, size=50, dtype=np.uint64) * np.uint64(2)
        # the NumPy path (50 blocks) and the Python-integer one (up to `_SMALL` blocks)
        got = np.concatenate([philox4x32(counters, key), philox4x32(counters[:3], key)])
        assert len(counters[:3]) <= _philox._SMALL < len(counters)
        for ctr, words in zip(counters.tolist() + counters[:3].tolist(), got.tolist(),
                              strict=True):  # fmt: skip
            expected = philox4x32_10((ctr & 0xFFFFFFFF, ctr >> 32, 0, 0),
                                     (key & 0xFFFFFFFF, key >> 32))  # fmt: skip
            assert tuple(words) == expected
    long = philox4x32(np.arange(_philox._CHUNK + 3, dtype=np.uint64), 99)
    for block in (0, _philox._CHUNK - 1, _philox._CHUNK, _philox._CHUNK + 2):
        assert tuple(long[block].tolist()) == philox4x32_10((block, 0, 0, 0), (99, 0))


def test_blocks_computed_ahead_match_the_reference() -> None:
    """Blocks are computed ahead per key in runs (`_AHEAD`) and served from them: requests
    inside a run, straddling its end, before its start, with another key in between, near the
    end of the counter space and spread wider than `_SPAN` all give the reference's words."""
    from ndd_triton.random import _philox

    def check(counters: np.ndarray, key: int) -> None:
        got = philox4x32(counters, key)
        for ctr, words in zip(counters.tolist(), got.tolist(), strict=True):
            assert tuple(words) == philox4x32_10((ctr & 0xFFFFFFFF, ctr >> 32, 0, 0),
                                                 (key & 0xFFFFFFFF, key >> 32))  # fmt: skip

    _philox._ahead.clear()
    run = _philox._AHEAD
    check(np.arange(60, 100, dtype=np.uint64), 7)  # a first request: computed as it comes
    assert _philox._ahead[7][1] is None
    check(np.arange(100, 140, dtype=np.uint64), 7)  # it follows: a run from block 100
    assert _philox._ahead[7][0] == 100 and len(_philox._ahead[7][1]) == run
    check(np.arange(100 + run - 20, 100 + run + 20, dtype=np.uint64), 7)  # past its end
    check(np.arange(60, 90, dtype=np.uint64), 7)  # before its start
    check(np.arange(5, 45, dtype=np.uint64) * 3, 8)  # another key, strided
    check(np.arange(2 * run, 2 * run + 40, dtype=np.uint64), 8)  # far from the last: as it comes
    assert _philox._ahead[8][1] is None
    check(np.arange(110, 150, dtype=np.uint64)[::-1].copy(), 7)  # any order
    top = (1 << 62) - 30
    check(np.arange(top, top + 30, dtype=np.uint64), 7)  # no run across the end
    check(np.array([3, 3 + _philox._SPAN + 5] * 10, dtype=np.uint64), 7)  # too wide a span
    assert tuple(draws_u32(9, 4 * 1000 + 2, 60).tolist()) == tuple(
        draw(9, 4 * 1000 + 2 + i) for i in range(60))


def test_rng_call_returns_reference_draws():
    rng = RNG(seed=5)
    assert [rng() for _ in range(6)] == [draw(5, i) for i in range(6)]
    assert str(rng.state) == "Philox_0000000000000005_0000000000000000:0000000000000001_2"


@triton.jit
def _draw_kernel(out, out2, out64, ptable, n, BLOCK: tl.constexpr):
    idx = tl.arange(0, BLOCK)
    mask = idx < n
    k0 = tl.load(ptable).to(tl.uint32)
    k1 = tl.load(ptable + 1).to(tl.uint32)
    base = tl.load(ptable + 2).to(tl.uint64, bitcast=True)
    e = idx.to(tl.uint64)
    tl.store(out + idx, _helper_philox_draw(k0, k1, base + e).to(tl.int64), mask=mask)
    a, b = _helper_philox_draw2(k0, k1, base + 2 * e)
    tl.store(out2 + 2 * idx, a.to(tl.int64), mask=mask)
    tl.store(out2 + 2 * idx + 1, b.to(tl.int64), mask=mask)
    tl.store(out64 + idx, _helper_unit_f64(a, b), mask=mask)


@pytest.mark.parametrize("base", [0, 8, (1 << 63) + 4, (1 << 64) - 16])
def test_triton_philox_is_bit_exact(base):
    key = 0xFEDCBA9876543210
    params = torch.tensor(np.array([key & 0xFFFFFFFF, key >> 32, np.uint64(base).view(np.int64)],
                                   dtype=np.int64), device=DEV)  # fmt: skip
    n = 21
    out = torch.zeros(n, dtype=torch.int64, device=DEV)
    out2 = torch.zeros(2 * n, dtype=torch.int64, device=DEV)
    out64 = torch.zeros(n, dtype=torch.float64, device=DEV)
    _draw_kernel[(1,)](out, out2, out64, params, n, BLOCK=32)
    out, out2, out64 = out.cpu(), out2.cpu(), out64.cpu()
    assert out.tolist() == [draw(key, (base + i) % (1 << 64)) for i in range(n)]
    pairs = draws_u32(key, base, 2 * n)
    assert out2.tolist() == [int(v) for v in pairs]
    np.testing.assert_array_equal(out64.numpy(), to_unit_float64(pairs[0::2], pairs[1::2]))


@triton.jit
def _mulhi_kernel(a_ptr, b_ptr, out, n, BLOCK: tl.constexpr):
    idx = tl.arange(0, BLOCK)
    mask = idx < n
    a = tl.load(a_ptr + idx, mask=mask).to(tl.uint64, bitcast=True)
    b = tl.load(b_ptr + idx, mask=mask).to(tl.uint64, bitcast=True)
    tl.store(out + idx, _helper_mulhi64(a, b).to(tl.int64, bitcast=True), mask=mask)


def test_mulhi64_numpy_and_triton_match_python():
    gen = np.random.default_rng(3)
    a = gen.integers(0, 1 << 64, 16, dtype=np.uint64, endpoint=False)
    b = gen.integers(0, 1 << 64, 16, dtype=np.uint64, endpoint=False)
    a[0], b[0] = (1 << 64) - 1, (1 << 64) - 1
    expected = [(int(x) * int(y)) >> 64 for x, y in zip(a, b, strict=True)]
    assert [int(v) for v in mulhi64_np(a, b)] == expected
    out = torch.zeros(16, dtype=torch.int64, device=DEV)
    _mulhi_kernel[(1,)](torch.from_numpy(a.view(np.int64)).to(DEV),
                        torch.from_numpy(b.view(np.int64)).to(DEV), out, 16, BLOCK=16)
    out = out.cpu()
    assert [int(v) for v in out.numpy().view(np.uint64)] == expected
    # bounded_index covers [0, span] and the full 64-bit range (span = 2**64 - 1)
    assert [int(v) for v in bounded_index(a, np.uint64((1 << 64) - 1))] == [int(v) for v in a]
    assert (bounded_index(a, np.uint64(2)) <= 2).all()


@triton.jit(do_not_specialize=DRAW_WORDS)
def _position_kernel(key_lo, key_hi, off_lo, off_hi, out):
    k0, k1, offset = _helper_position(key_lo, key_hi, off_lo, off_hi)
    tl.store(out, k0.to(tl.int64))
    tl.store(out + 1, k1.to(tl.int64))
    tl.store(out + 2, offset.to(tl.int64, bitcast=True))
    tl.store(out + 3, _helper_philox_draw(k0, k1, offset).to(tl.int64))


@pytest.mark.parametrize("at", [(0, 0), ((1 << 64) - 1, (1 << 64) - 1),
                                (0x8000_0000_7FFF_FFFF, 0x1_0000_0003), (5, 1 << 63)])  # fmt: skip
def test_draw_words_carry_the_rng_position_to_a_kernel(at):
    """`GpuRun.launch_drawing` passes a call's RNG position as four int32 words (Triton then
    neither retypes nor specialises them by value); `_helper_position` rebuilds the key halves
    and the 64-bit offset exactly, and the draw there is NumPy's."""
    key, offset = at
    words = draw_words(at)
    assert all(-(1 << 31) <= w < 1 << 31 for w in words)
    out = torch.zeros(4, dtype=torch.int64, device=DEV)
    _position_kernel[(1,)](*words, out)
    got = [int(v) for v in out.cpu().numpy().view(np.uint64)]
    assert got[:3] == [key & 0xFFFFFFFF, key >> 32, offset]
    assert got[3] == int(draws_u32(key, offset, 1)[0])


def test_seed_truncation_and_types():
    assert RNG(seed=-1).state.key == (1 << 64) - 1
    assert RNG(seed=2**70 + 3).state.key == 3
    assert RNG(seed=np.int32(9)).state.key == 9
    with pytest.raises(TypeError, match="seed must be an int; got float"):
        RNG(seed=1.5)
    with pytest.raises(ValueError, match="Cannot specify both seed and state"):
        RNG(seed=1, state=RNG(seed=2).state)
    a, b = RNG(), RNG()
    assert a.state != b.state  # seed=None draws a random seed


def test_seed_is_write_only():
    rng = RNG(seed=1)
    rng()
    with pytest.raises(AttributeError, match="seed is write-only"):
        _ = rng.seed
    rng.seed = 1
    assert rng() == RNG(seed=1)()


def test_state_round_trips():
    rng = RNG(seed=42)
    for _ in range(7):
        rng()
    text = str(rng.state)
    assert text == "Philox_000000000000002a_0000000000000000:0000000000000001_3"
    assert repr(rng) == f"RNG(state='{text}')"
    assert repr(rng.state) == f"RNGState('{text}')"
    expected = [rng() for _ in range(5)]
    for restored in (RNG(state=text), RNG(state=RNGState.parse(text))):
        assert [restored() for _ in range(5)] == expected
    other = RNG(seed=0)
    other.set_state(text)
    assert [other() for _ in range(5)] == expected
    other.state = rng.get_state(cuda_stream=None)
    assert other.state == rng.state
    assert hash(other.state) == hash(rng.state)
    big = "Philox_ffffffffffffffff_0000000000000001:0000000000000000_1"
    assert str(RNG(state=big).state) == big


@pytest.mark.parametrize(("text", "exc", "match"), [
    ("Philox_", ValueError, "Invalid Philox state string length: 7"),
    ("x" * 7, ValueError, "Invalid Philox state string length: 7"),
    ("Philox_000000000000002a_0000000000000000:0000000000000001_4", ValueError,
     "Invalid Philox state string: .*lane 0-3"),
    ("Philox_00000000000000zz_0000000000000000:0000000000000001_0", ValueError,
     "Invalid Philox state string"),
    ("Xhilox_000000000000002a_0000000000000000:0000000000000001_0", ValueError,
     "Invalid Philox state string"),
    ("Philox_-00000000000002a_0000000000000000:0000000000000001_0", ValueError,
     "Invalid Philox state string"),
    (12, TypeError, "RNG state must be an RNGState or its string form; got int"),
])  # fmt: skip
def test_state_parse_errors(text, exc, match):
    with pytest.raises(exc, match=match):
        RNG(state=text)
    with pytest.raises(exc, match=match):
        RNG(seed=1).set_state(text)


def test_clone_is_independent_and_continues():
    rng = RNG(seed=3)
    rng()
    copy = rng.clone()
    assert copy is not rng
    assert copy.state == rng.state
    first = [copy() for _ in range(4)]
    assert [rng() for _ in range(4)] == first  # cloning did not move the original
    copy()
    assert copy.state != rng.state


def test_copy_and_pickle_continue_the_sequence():
    import copy
    import pickle

    rng = RNG(seed=8)
    rng()
    for twin in (copy.copy(rng), copy.deepcopy(rng), pickle.loads(pickle.dumps(rng))):
        assert twin is not rng
        assert twin.state == rng.state
        assert twin() == rng.clone()()


def test_advance():
    rng, ref = RNG(seed=11), RNG(seed=11)
    rng.advance(5)
    for _ in range(5):
        ref()
    assert rng.state == ref.state
    assert rng() == ref()
    rng.advance(0)
    with pytest.raises(ValueError, match="n must be non-negative; got -1"):
        rng.advance(-1)
    with pytest.raises(TypeError, match="n must be an int; got float"):
        rng.advance(1.5)


def test_reserve_aligns_and_advances():
    rng = RNG(seed=2)
    rng()  # offset 1
    key, bases = rng.reserve([3, 0, 8])
    assert key == 2
    assert bases.dtype == np.uint64
    assert bases.tolist() == [4, 8, 8]
    assert rng.state.offset == 16
    with pytest.raises(ValueError, match="counts must be non-negative"):
        rng.reserve([-1])


def test_independent_rngs_and_same_seed_same_draws():
    a, b, c = RNG(seed=1), RNG(seed=1), RNG(seed=2)
    seq_a = [a() for _ in range(16)]
    assert seq_a == [b() for _ in range(16)]
    assert seq_a != [c() for _ in range(16)]
    x = ndd.random.uniform(shape=64, rng=RNG(seed=9))
    y = ndd.random.uniform(shape=64, rng=RNG(seed=9))
    np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_default_rng_is_thread_local_and_set_seed():
    ndd.random.set_seed(123)
    main = ndd.random.get_default_rng()
    assert main is ndd.random.get_default_rng()
    expected = np.asarray(ndd.random.uniform(shape=8))
    ndd.random.set_seed(123)
    np.testing.assert_array_equal(np.asarray(ndd.random.uniform(shape=8)), expected)
    seen = {}

    def worker():
        seen["rng"] = ndd.random.get_default_rng()
        ndd.random.set_seed(123)
        seen["values"] = np.asarray(ndd.random.uniform(shape=8))

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert seen["rng"] is not main
    np.testing.assert_array_equal(seen["values"], expected)  # same seed, same draws
    with pytest.raises(TypeError, match="set_seed: seed must be an int; got str"):
        ndd.random.set_seed("1")
    with pytest.raises(TypeError, match="set_seed: seed must be an int; got float"):
        ndd.random.set_seed(1.0)


def test_rng_argument_must_be_an_rng():
    with pytest.raises(TypeError, match=r"random\.uniform: argument 'rng' expects an "
                                        r"ndd\.random\.RNG; got int"):  # fmt: skip
        ndd.random.uniform(shape=2, rng=5)
    with pytest.raises(TypeError, match="unexpected keyword argument 'seed'"):
        ndd.random.uniform(shape=2, seed=5)


def test_ops_advance_the_rng_deterministically():
    rng = RNG(seed=4)
    ndd.random.uniform(shape=10, rng=rng)  # 10 draws
    assert rng.state.offset == 12  # rounded up to a Philox block
    ndd.random.normal(shape=3, rng=rng)  # 2 draws each
    assert rng.state.offset == 20


def test_single_draws_match_per_base_draws():
    """`single_draws`: the first draw at each of many bases (any lane, near the wrap of the
    64-bit draw space) in one pass, as `draws_u32` gives them one by one."""
    from ndd_triton.random._philox import single_draws

    rs = np.random.default_rng(5)
    bases = np.concatenate([rs.integers(0, 1 << 63, size=40, dtype=np.uint64) * np.uint64(2)
                            + rs.integers(0, 2, size=40, dtype=np.uint64),
                            np.array([0, 1, 2, 3, 7, (1 << 64) - 1], dtype=np.uint64)])  # fmt: skip
    key = 0x0123456789ABCDEF
    assert [int(v) for v in single_draws(key, bases)] == \
        [int(draws_u32(key, int(b), 1)[0]) for b in bases]  # fmt: skip
