# Two commands do everything on a fresh machine: `make demo` and `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# torch==2.13.0 resolves to the CPU build on local disk here; a bare `torch` may pull CUDA wheels.
TORCH_PIN ?= torch==2.13.0

.PHONY: demo test venv bench clean

$(BIN)/.installed: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q "$(TORCH_PIN)"
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
