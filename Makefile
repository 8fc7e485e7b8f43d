# Two commands do everything on a fresh machine: `make demo` and `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# The torch CI tests with: torch==2.13.0 resolves to the CPU build on this machine's local index.
# Elsewhere pick the build for the machine before `make`: CPU-only from PyPI's CPU index
#   make test TORCH_PIN="torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"
# a CUDA machine:  make test TORCH_PIN="torch==2.13.0 --index-url https://download.pytorch.org/whl/cu128"
# or an installed torch (any 2.11 <= version < 3, pyproject.toml):  make test TORCH_PIN=torch
TORCH_PIN ?= torch==2.13.0

.PHONY: demo test venv bench clean

$(BIN)/.installed: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q $(TORCH_PIN)
	$(BIN)/pip install -q -e ".[test]"
	touch $@

venv: $(BIN)/.installed

demo: venv
	$(BIN)/python -m ndd_triton demo $(ARGS)

# The suite runs in TEST_WORKERS pytest-xdist processes (one per CPU, at most 8); each saves the Triton launches it saw,
# and the kernel compile check and report (every launched kernel compiled for sm_80/sm_90) then
# run once over all of them. `pytest tests` alone (one process) does the same in one session.
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); [ $$n -gt 8 ] && n=8; echo $$n)
LAUNCHES := build/test_launches.json
KERNEL_TESTS := tests/test_kernels_compile.py tests/test_kernel_report.py tests/test_kernel_bench_report.py

test: venv
	$(BIN)/python -m ruff check ndd_triton
	mkdir -p build && rm -f $(LAUNCHES).*
	NDD_TRITON_EMULATE_GPU=1 TRITON_INTERPRET=1 NDD_TRITON_LAUNCH_LOG=$(LAUNCHES) \
	    $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist worksteal tests \
	    $(addprefix --ignore=,$(KERNEL_TESTS))
	NDD_TRITON_EMULATE_GPU=1 TRITON_INTERPRET=1 NDD_TRITON_KERNEL_JOBS='$(LAUNCHES).*' \
	    $(BIN)/python -m pytest -q $(KERNEL_TESTS)

bench: venv
	$(BIN)/python perf/report.py

clean:
	rm -rf $(VENV) build *.egg-info
