#!/usr/bin/env bash
# Profiles of the GPU path on a machine with an NVIDIA GPU (perf/gpu.md): GPU decode and the
# RN50 loop (eager, compile mode, compile mode without fusion), each run by
# perf/profile_gpu_path.py under `py-spy record --threads` (when py-spy is installed, e.g. from
# a wheel in .whl/ as tools/gpu_check.sh installs them), its output and the per-thread summary
# (perf/spy_summary.py) in ${OUT:-gpu_check_out}/prof_<name>.log, the raw samples in
# spy_raw.tar.gz. Usage: bash tools/gpu_profile.sh [seconds per profile]
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu_check_out}
mkdir -p "$OUT" /tmp/ndd_spy
PY=${PY:-python3}
[ -d /tmp/ndd_site ] && export PYTHONPATH=/tmp/ndd_site
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 PATH="/tmp/ndd_site/bin:$PATH"
seconds=${1:-8}
profile() {
    local name=$1; shift
    echo "== profile $name"
    if command -v py-spy >/dev/null; then
        timeout 120 py-spy record -r 100 -f raw --threads -o "/tmp/ndd_spy/$name.txt" -- \
            $PY perf/profile_gpu_path.py "$@" --seconds "$seconds" > "$OUT/prof_$name.log" 2>&1
        echo "rc=$?"
        $PY perf/spy_summary.py "/tmp/ndd_spy/$name.txt" --top 40 --exclude _find_and_load --exclude make_folder \
            >> "$OUT/prof_$name.log" 2>&1
    else
        timeout 120 $PY perf/profile_gpu_path.py "$@" --seconds "$seconds" \
            > "$OUT/prof_$name.log" 2>&1
        echo "rc=$? (no py-spy)"
    fi
    grep -v "^  \|^own:\|^inclusive:" "$OUT/prof_$name.log" | grep -v "nvjpeg2k\|nvtiff\|nvJPEG2000\|nvTIFF" | head -60
}
profile decode decode
profile rn50_eager rn50
profile rn50_compile rn50 --compile
profile rn50_nofuse rn50 --compile --no-fuse
tar czf "$OUT/spy_raw.tar.gz" -C /tmp/ndd_spy . 2>/dev/null
