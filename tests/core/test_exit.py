"""Interpreter exit with eager work nobody consumed: dropped, not run (runtime/executor.py).

Before the fix the exit ran every queued op (the pool finished its pipelined job, then the
executor ran the rest), so a script that queued work and ended took as long as the work.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import ndd_triton as ndd

_ENV = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(ndd.__file__))}


def _run(script: str, timeout: float = 180.0) -> tuple[str, float]:
    """Run `script` in a fresh interpreter; (its stdout, seconds from its LAST line to its end)."""
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(script)], env=_ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    lines = []
    assert proc.stdout is not None
    last = None
    for line in proc.stdout:
        lines.append(line)
        if line.startswith("LAST"):
            last = time.monotonic()
            break
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    assert proc.returncode == 0, err
    assert last is not None, err
    return "".join(lines), time.monotonic() - last


def test_unconsumed_eager_work_is_dropped_at_exit():
    # Queue at least 60 s of CPU work (timed in the script itself), never read it, and exit.
    out, exit_s = _run("""
        import math, time
        import numpy as np
        import ndd_triton as ndd
        batch = ndd.batch([np.zeros((400, 400, 3), np.uint8)] * 4, layout="HWC")
        times = []
        for _ in range(4):  # the first is a warm-up
            start = time.perf_counter()
            ndd.gaussian_blur(batch, window_size=21).evaluate()
            times.append(time.perf_counter() - start)
        one = min(times[1:])
        count = min(math.ceil(60.0 / one), 4000)
        pending = [ndd.gaussian_blur(batch, window_size=21) for _ in range(count)]
        print(f"queued {count} calls, {count * one:.0f} s of work", flush=True)
        print("LAST", flush=True)
    """)
    assert "queued" in out
    # An interpreter that imported torch takes 1.5-2.5 s to exit on a loaded 2-core machine
    # (torch's own teardown); running the queued work would take over 60 s.
    assert exit_s < 15.0, out


def test_a_thread_that_outlives_the_main_thread_gets_its_results():
    # Work of a non-daemon thread still running when the main thread ends is not dropped.
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import threading, time
        import numpy as np
        import ndd_triton as ndd
        def body():
            time.sleep(0.5)
            batch = ndd.batch([np.ones((300, 300, 3), np.uint8)] * 4, layout="HWC")
            outs = [ndd.flip(ndd.flip(batch)) for _ in range(3)]
            print("sums", [int(np.asarray(o.select(3)).sum()) for o in outs], flush=True)
        threading.Thread(target=body).start()
    """)], env=_ENV, capture_output=True, text=True, timeout=180)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "sums [270000, 270000, 270000]"
