#!/usr/bin/env bash
# The real-CUDA check, for a machine with an NVIDIA GPU (CI has none): the test suite with
# compiled Triton kernels (NDD_TRITON_TEST_DEVICE=cuda), the demo on device="gpu",
# perf/bench_gpu.py (RN50 data path, decode), perf/bench_gpu_kernels.py (device time per
# kernel vs torch and the roofline, host time of a tiny call) and perf/bench_gpu_host.py --real
# (host µs per call and per sample, launch memo on and missed). Logs go to ${OUT:-gpu_check_out}/. Wheels missing there (nvImageCodec,
# nvJPEG, simplejpeg) may be put in .whl/ beside the repo root; they are installed first.
# Usage: bash tools/gpu_check.sh [pytest seconds] [bench seconds] [bench --only] [kernels seconds]
#        [host seconds] [kernels --only]  (a stage given 0 seconds is skipped)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu_check_out}
mkdir -p "$OUT"
PY=${PY:-python3}
if ls .whl/*.whl >/dev/null 2>&1; then
    $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/ndd_site .whl/*.whl && export PYTHONPATH=/tmp/ndd_site
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
{
    nvidia-smi -L
    $PY -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__,
torch.cuda.get_device_name())"
    $PY -c "from nvidia import nvimgcodec; print('nvimgcodec', nvimgcodec.__version__)" 2>&1 | tail -1
} > "$OUT/env.log" 2>&1
cat "$OUT/env.log"
echo "== demo (device=gpu)"
timeout 90 $PY -m ndd_triton demo --device gpu --epochs 3 --out /tmp/ndd_demo > "$OUT/demo.log" 2>&1
echo "demo rc=$?"; tail -3 "$OUT/demo.log"
# stage SECONDS NAME COMMAND...: COMMAND under a timeout, its output in $OUT/NAME.log (0 s: skipped)
stage() {
    local seconds=$1 name=$2; shift 2
    if [ "$seconds" = 0 ]; then echo "== $name: skipped"; return; fi
    echo "== $name"
    timeout "$seconds" "$@" > "$OUT/$name.log" 2>&1
    echo "$name rc=$?"
}
xdist=""
$PY -c "import xdist" 2>/dev/null && xdist="-n $(( $(nproc) > 14 ? 14 : $(nproc) ))"
$PY -c "import pytest_timeout" 2>/dev/null && xdist="$xdist --timeout 120"
NDD_TRITON_TEST_DEVICE=cuda stage "${1:-280}" tests $PY -m pytest $xdist -v --tb=short \
    -p no:cacheprovider -p no:benchmark \
    tests --ignore=tests/test_kernels_compile.py --ignore=tests/test_kernel_report.py \
    --ignore=tests/test_kernel_bench_report.py \
    --ignore=tests/test_dali_diff_tool.py
if [ -f "$OUT/tests.log" ]; then
    grep -c " PASSED" "$OUT/tests.log"; grep -E " (FAILED|ERROR)" "$OUT/tests.log" | head -60
    tail -5 "$OUT/tests.log"
fi
stage "${2:-170}" bench $PY perf/bench_gpu.py --only "${3:-rn50,kernels,profile}"
[ -f "$OUT/bench.log" ] && grep -B2 -A16 "^## " "$OUT/bench.log"
stage "${4:-150}" kernels $PY perf/bench_gpu_kernels.py --only "${6:-}"
[ -f "$OUT/kernels.log" ] && cat "$OUT/kernels.log"
for memo in on miss; do
    stage "${5:-60}" "host_$memo" $PY perf/bench_gpu_host.py --real --memo $memo --reps 10
    [ -f "$OUT/host_$memo.log" ] && grep -v "nvjpeg2k\|nvtiff\|nvJPEG2000\|nvTIFF" "$OUT/host_$memo.log"
done
