"""Where the wall time of GPU decode and of the GPU RN50 loop goes, on a real GPU (perf/gpu.md).

`python perf/profile_gpu_path.py decode|rn50 [--compile] [--no-fuse] [--seconds S]` runs the
loop for about S seconds (long enough for a sampling profiler such as `py-spy record --threads
-f raw` around it), then prints:

* decode: ms per batch of `--batch` JPEGs for `decoders.image(device="gpu").evaluate()` (also
  its two codec paths alternating: into the output's slots, or per-image wrap + packing) beside
  nvImageCodec called directly (code streams made once, outside the timing, as
  perf/bench_gpu.py's ceiling row; and made per call from the same NumPy arrays, as any caller
  holding file bytes must), and the time spent inside the pieces of ndd's GPU decoder (wrapped
  with counters: the codec call, `CodeStream` creation, the completeness check, DLPack
  wrapping, the packing copy), plus the op call's caller-side time (prepare) vs the wait;
* rn50: images/s of the loop (eager or compile mode), where the caller's time goes per batch
  (in op calls, in `.torch()` waiting, in the reader), and a torch.profiler table of the CUDA
  kernels of 4 batches (device µs per batch and launches per batch).
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_rn50 import MEAN, STD, make_folder

TIMERS: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])


def timed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` with its wall time and call count added to TIMERS[name] (any thread)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            cell = TIMERS[name]
            cell[0] += time.perf_counter() - start
            cell[1] += 1

    return wrapper


def print_timers(batches: int) -> None:
    print(f"{'piece':<44} {'ms/batch':>9} {'calls/batch':>12}")
    for name, (total, calls) in sorted(TIMERS.items(), key=lambda kv: -kv[1][0]):
        print(f"{name:<44} {1e3 * total / batches:9.3f} {calls / batches:12.1f}")
    TIMERS.clear()


def per_batch_ms(fn: Callable[[], Any], batches: int, seconds: float) -> float:
    """Median ms per batch of `fn` (one epoch of `batches` batches), repeated for `seconds`."""
    import torch

    fn()
    torch.cuda.synchronize()
    times, end = [], time.perf_counter() + seconds
    while time.perf_counter() < end or len(times) < 3:
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append(1e3 * (time.perf_counter() - start) / batches)
    return statistics.median(times)


class _TimedDecoder:
    """nvImageCodec's Decoder with its `decode` timed."""

    def __init__(self, decoder: Any) -> None:
        self._decoder = decoder
        self.decode = timed("codec Decoder.decode", decoder.decode)


class _TimedModule:
    """The nvimgcodec module with `CodeStream` and `DecodeParams` construction timed."""

    def __init__(self, module: Any) -> None:
        self._module = module
        self.CodeStream = timed("codec CodeStream()", module.CodeStream)
        self.DecodeParams = timed("codec DecodeParams()", module.DecodeParams)
        self.as_images = timed("codec as_images()", module.as_images)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)


def decode_profile(encoded: list[np.ndarray], opts: argparse.Namespace) -> None:
    import torch

    import ndd_triton as ndd
    from ndd_triton.kernels.gpu import decoders as gdec

    batches = [encoded[i:i + opts.batch] for i in range(0, len(encoded), opts.batch)]
    nb = len(batches)
    ndd_batches = [ndd.as_batch(b) for b in batches]
    rows: dict[str, float] = {}

    def ndd_epoch() -> None:
        for b in ndd_batches:
            ndd.decoders.image(b, device="gpu").evaluate()

    rows["ndd decoders.image(gpu).evaluate()"] = per_batch_ms(ndd_epoch, nb, opts.seconds)
    # the two codec paths of ndd's GPU decoder, alternating: decoded into the output's slots,
    # or as the codec's own images wrapped per image and packed with one copy
    # (and a candidate: the slots handed over as plain `__cuda_array_interface__` objects
    # instead of torch views, whose own interface property costs several µs per image)
    torch_targets = gdec._targets
    paths = {"ndd, decoded into the output (A/B)": (True, torch_targets),
             "ndd, into the output, plain CAI slots (A/B)": (True, cai_targets),
             "ndd, per-image wrap + packing copy (A/B)": (False, torch_targets)}
    times: dict[str, list[float]] = {name: [] for name in paths}
    for _ in range(3):
        for name, (flag, targets) in paths.items():
            gdec._INTO_OUTPUT[0], gdec._targets = flag, targets
            times[name].append(per_batch_ms(ndd_epoch, nb, opts.seconds / 9))
            if flag and not gdec._INTO_OUTPUT[0]:
                print(f"{name}: the codec did not decode into the output")
    gdec._INTO_OUTPUT[0], gdec._targets = True, torch_targets
    rows.update({name: statistics.median(t) for name, t in times.items()})
    try:
        from nvidia import nvimgcodec
    except ImportError:
        nvimgcodec = None
    if nvimgcodec is not None:
        decoder = nvimgcodec.Decoder()
        streams = [[nvimgcodec.CodeStream(e) for e in b] for b in batches]

        def codec_prebuilt() -> None:
            for s in streams:
                decoder.decode(s)

        def codec_per_call() -> None:
            for b in batches:
                decoder.decode([nvimgcodec.CodeStream(e) for e in b])

        def codec_wrapped() -> None:  # what a caller needs for torch tensors
            for b in batches:
                images = decoder.decode([nvimgcodec.CodeStream(e) for e in b])
                [torch.from_dlpack(im) for im in images]

        rows["nvImageCodec, code streams made once"] = per_batch_ms(codec_prebuilt, nb, 3)
        rows["nvImageCodec, code streams per call"] = per_batch_ms(codec_per_call, nb, 3)
        rows["nvImageCodec per call + torch.from_dlpack"] = per_batch_ms(codec_wrapped, nb, 3)
        rows.update(codec_variants(nvimgcodec, decoder, batches, opts))
    if nvimgcodec is not None:  # the op's output against the codec's own images, pixel for pixel
        same: Any = True
        try:
            for b, batch in zip(batches, ndd_batches, strict=True):
                ours = [t.torch() for t in ndd.decoders.image(batch, device="gpu").tensors]
                theirs = decoder.decode([nvimgcodec.CodeStream(e) for e in b])
                same &= all(torch.equal(o, torch.from_dlpack(t))
                            for o, t in zip(ours, theirs, strict=True))  # fmt: skip
        except Exception as e:
            same = f"check failed: {type(e).__name__}: {e}"
        print(f"ndd's GPU decode identical to nvImageCodec's own images: {same} (decoded into "
              f"the output: {gdec._INTO_OUTPUT[0]})")
    print(f"\n## decode: {len(encoded)} JPEGs, batch {opts.batch}")
    for name, ms in rows.items():
        print(f"{name:<50} {ms:8.3f} ms/batch  {opts.batch / ms * 1e3:9.1f} img/s")

    # the pieces of ndd's decode, one more timed pass
    if nvimgcodec is not None:
        gdec._nvimgcodec()
        module, dec = gdec._nvimgcodec_decoder
        gdec._nvimgcodec_decoder = (_TimedModule(module), _TimedDecoder(dec))
    for name in ("_nvimgcodec_decode", "all_complete", "_decode_into_output", "_code_streams",
                 "_to_torch", "_host_decode"):
        setattr(gdec, name, timed(f"gpu decoder {name}", getattr(gdec, name)))
    cat = torch.cat
    torch.cat = timed("torch.cat (packing copy)", cat)
    call = ndd.decoders.image
    try:
        for b in ndd_batches:
            start = time.perf_counter()
            out = call(b, device="gpu")
            mid = time.perf_counter()
            out.evaluate()
            torch.cuda.synchronize()
            TIMERS["caller: op call (prepare)"][0] += mid - start
            TIMERS["caller: evaluate + sync (wait)"][0] += time.perf_counter() - mid
    finally:
        torch.cat = cat
    print_timers(nb)


class _Slot:
    """A sample slot as a bare `__cuda_array_interface__` (uint8, C-contiguous)."""

    __slots__ = ("__cuda_array_interface__",)

    def __init__(self, pointer: int, shape: tuple[int, ...]) -> None:
        self.__cuda_array_interface__ = {"shape": shape, "typestr": "|u1", "strides": None,
                                         "data": (pointer, False), "version": 3}  # fmt: skip


def cai_targets(out: Any) -> list[_Slot]:
    """The GPU decoder's `_targets`, as `_Slot`s instead of torch views."""
    base = out.data.data_ptr()
    return [_Slot(base + o, tuple(shape))
            for o, shape in zip(out.offsets.tolist(), out.shapes.tolist(), strict=True)]


def codec_variants(nvimgcodec: Any, decoder: Any, batches: list[list[np.ndarray]],
                   opts: argparse.Namespace) -> dict[str, float]:
    """nvImageCodec called directly with one of ndd's choices at a time: which one costs?"""
    import torch

    nb = len(batches)
    side = torch.cuda.Stream()
    rgb = getattr(nvimgcodec.ColorSpec, "SRGB", None) or nvimgcodec.ColorSpec.RGB
    params = nvimgcodec.DecodeParams(color_spec=rgb, apply_exif_orientation=True)
    packed = []
    for b in batches:  # views of one buffer per batch, as a reader's batch holds them
        flat = np.concatenate(b)
        ends = np.cumsum([len(e) for e in b])
        packed.append([flat[end - len(e):end] for e, end in zip(b, ends, strict=True)])
    pinned = [[torch.from_numpy(e).pin_memory().numpy() for e in b] for b in batches]

    def run(source: list[list[np.ndarray]], stream: int | None = None, prm: Any = None,
            wrap: bool = False) -> Callable[[], None]:  # fmt: skip
        def epoch() -> None:
            for b in source:
                kwargs: dict[str, Any] = {}
                if stream is not None:
                    kwargs["cuda_stream"] = stream
                if prm is not None:
                    kwargs["params"] = prm
                images = decoder.decode([nvimgcodec.CodeStream(e) for e in b], **kwargs)
                if wrap:
                    with torch.cuda.stream(side):
                        ts = [torch.from_dlpack(im.__dlpack__(stream=side.cuda_stream))
                              for im in images]  # fmt: skip
                        torch.cat([t.reshape(-1) for t in ts])

        return epoch

    variants = {
        "variant: cuda_stream = a torch side stream": run(batches, side.cuda_stream),
        "variant: cuda_stream = 0 (given)": run(batches, 0),
        "variant: ndd's DecodeParams (SRGB, exif)": run(batches, None, params),
        "variant: code streams on views of one buffer": run(packed),
        "variant: code streams on pinned copies": run(pinned),
        "variant: side stream + dlpack + cat (ndd's path)": run(batches, side.cuda_stream, params,
                                                                True),
    }
    rows = {}
    for name, fn in variants.items():
        try:
            rows[name] = per_batch_ms(fn, nb, 2)
        except Exception as e:
            print(f"{name}: FAILED {type(e).__name__}: {e}")
    try:
        from torch.profiler import ProfilerActivity, profile

        for name, fn in (("direct", run(batches)), ("ndd", lambda: [
                ndd_decode(b) for b in batches[:1]])):  # fmt: skip
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                fn()
                torch.cuda.synchronize()
            print(f"\nCUDA activity of {name} decode ({'1 batch' if name == 'ndd' else nb} "
                  "batches):")
            for e in sorted(prof.key_averages(), key=lambda e: -e.self_device_time_total)[:8]:
                print(f"  {e.key[:60]:<60} {e.self_device_time_total:9.1f} µs {e.count:6d}")
    except Exception as e:
        print(f"profiler tables failed: {type(e).__name__}: {e}")
    return rows


def ndd_decode(encoded: list[np.ndarray]) -> None:
    import ndd_triton as ndd

    ndd.decoders.image(ndd.as_batch(encoded), device="gpu").evaluate()


def rn50_profile(root: str, opts: argparse.Namespace) -> None:
    import torch

    import ndd_triton as ndd
    from ndd_triton.runtime import compiled

    ndd.set_num_threads(opts.threads)
    rng = ndd.random.RNG(seed=42)
    if opts.no_fuse:
        compiled.plan_groups = lambda program: {}
    reader = ndd.readers.File(file_root=root, random_shuffle=True, seed=1)

    def epoch(limit: int | None = None) -> int:
        n = 0
        it = iter(reader.next_epoch(batch_size=opts.batch, compile=opts.compile))
        while True:
            t0 = time.perf_counter()
            try:
                jpegs, labels = next(it)
            except StopIteration:
                break
            t1 = time.perf_counter()
            images = ndd.decoders.image(jpegs, device="gpu")
            images = ndd.random_resized_crop(images, size=224, rng=rng)
            flips = ndd.random.coin_flip(batch_size=jpegs.batch_size, rng=rng)
            images = ndd.flip(images, horizontal=flips)
            out = ndd.crop_mirror_normalize(images, mean=MEAN, std=STD)
            t2 = time.perf_counter()
            out.torch()
            labels.torch()
            t3 = time.perf_counter()
            for name, dt in (("caller: reader next()", t1 - t0), ("caller: op calls", t2 - t1),
                             ("caller: .torch() (wait)", t3 - t2)):  # fmt: skip
                TIMERS[name][0] += dt
                TIMERS[name][1] += 1
            n += jpegs.batch_size
            if limit is not None and n >= limit:
                getattr(it, "close", lambda: None)()
                break
        return n

    epoch()
    torch.cuda.synchronize()
    TIMERS.clear()
    rates, images, end = [], 0, time.perf_counter() + opts.seconds
    while time.perf_counter() < end or len(rates) < 3:
        start = time.perf_counter()
        n = epoch()
        torch.cuda.synchronize()
        rates.append(n / (time.perf_counter() - start))
        images += n
    mode = "compile" + ("" if not opts.no_fuse else ", no fusion") if opts.compile else "eager"
    print(f"\n## rn50 GPU loop ({mode}): median {statistics.median(rates):.1f} img/s over "
          f"{len(rates)} epochs")
    print_timers(images // opts.batch)
    try:
        kernel_table(epoch, opts)
    except Exception as e:  # the timings above are kept
        print(f"torch.profiler table failed: {type(e).__name__}: {e}")


def kernel_table(epoch: Callable[[int], int], opts: argparse.Namespace) -> None:
    """Device µs and launches per batch of the CUDA kernels of 4 batches (torch.profiler)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        epoch(limit=4 * opts.batch)
        torch.cuda.synchronize()
    kernels = [e for e in prof.key_averages() if e.device_type.name == "CUDA"
               and getattr(e, "self_device_time_total", 0) > 0]  # fmt: skip
    kernels.sort(key=lambda e: -e.self_device_time_total)
    print(f"\nCUDA kernels of 4 batches (per batch): {'µs':>9} {'launches':>9}")
    total = 0.0
    for e in kernels[:20]:
        total += e.self_device_time_total
        print(f"{e.key[:60]:<60} {e.self_device_time_total / 4:9.1f} {e.count / 4:9.1f}")
    print(f"{'(top 20 together)':<60} {total / 4:9.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("decode", "rn50"))
    parser.add_argument("--count", type=int, default=512)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--compile", action="store_true")
    parser.add_argument("--no-fuse", action="store_true")
    opts = parser.parse_args()
    import torch

    if not torch.cuda.is_available():
        sys.exit("perf/profile_gpu_path.py: no CUDA device (torch.cuda.is_available() is False)")
    with tempfile.TemporaryDirectory() as root:
        paths = make_folder(root, opts.count)
        if opts.what == "decode":
            decode_profile([np.fromfile(p, dtype=np.uint8) for p in paths], opts)
        else:
            rn50_profile(root, opts)


if __name__ == "__main__":
    main()
