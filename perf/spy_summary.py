"""Summarise a `py-spy record --threads -f raw` profile: per thread, where the samples are.

`python perf/spy_summary.py PROFILE.txt [--top 25] [--exclude TEXT ...]` prints, for each
thread with samples (stacks with a frame containing an `--exclude` text left out: imports,
set-up), its share of all samples, the functions with the most *own* samples (the frame on top
of the stack) and the most *inclusive* samples (anywhere on the stack, once per sample).
Frames are shortened to `function (file)`, the file's last two path parts.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter, defaultdict

_FRAME = re.compile(r"^(?P<func>.*?) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")


def short(frame: str) -> str:
    m = _FRAME.match(frame.strip())
    if not m:
        return frame.strip()
    file = "/".join(m["file"].split("/")[-2:])
    return f"{m['func']} ({file})"


def load(path: str) -> dict[str, list[tuple[list[str], int]]]:
    """thread -> [(frames root first, samples)]"""
    threads: dict[str, list[tuple[list[str], int]]] = defaultdict(list)
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or " " not in line:
                continue
            stack, _, count = line.rpartition(" ")
            if not count.isdigit():
                continue
            frames = stack.split(";")
            thread = frames[0] if frames[0].startswith(("thread", "process")) else "?"
            rest = frames[1:] if thread != "?" else frames
            if rest and rest[0].startswith("thread"):
                thread, rest = rest[0], rest[1:]
            threads[thread].append(([short(f) for f in rest], int(count)))
    return threads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("profile")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--exclude", action="append", default=[],
                        help="leave out stacks with a frame containing this text")
    opts = parser.parse_args()
    threads = load(opts.profile)
    total = sum(n for stacks in threads.values() for _, n in stacks)
    order = sorted(threads, key=lambda t: -sum(n for _, n in threads[t]))
    for thread in order:
        stacks = [(s, n) for s, n in threads[thread]
                  if not any(x in f for f in s for x in opts.exclude)]  # fmt: skip
        samples = sum(n for _, n in stacks)
        if samples < total * 0.01:
            continue
        own, inclusive = Counter(), Counter()
        for frames, n in stacks:
            if frames:
                own[frames[-1]] += n
            for f in set(frames):
                inclusive[f] += n
        print(f"\n## {thread}: {samples} samples ({100 * samples / total:.1f}% of all)")
        print("own:")
        for f, n in own.most_common(opts.top):
            print(f"  {100 * n / samples:5.1f}%  {f}")
        print("inclusive:")
        for f, n in inclusive.most_common(opts.top):
            print(f"  {100 * n / samples:5.1f}%  {f}")


if __name__ == "__main__":
    main()
