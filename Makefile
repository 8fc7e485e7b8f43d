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

test: venv
	$(BIN)/python -m ruff check ndd_triton
	NDD_TRITON_EMULATE_GPU=1 TRITON_INTERPRET=1 $(BIN)/python -m pytest -q tests

bench: venv
	$(BIN)/python perf/report.py

clean:
	rm -rf $(VENV) build *.egg-info
