# papergym: `make demo` and `make test` each create or refresh .venv, then run.
# torch==2.13.0 (a CPU wheel) is installed before anything that could pull torch in: any other
# torch spec resolves to a multi-GB CUDA build on these machines.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check -q
TORCH_SPEC ?= torch==2.13.0
TEST_EXTRAS ?= dev,llm,remote,retrieval,retrieval-dense,vision,train,audio,audio-light
DEMO_EXTRAS ?= train,retrieval,vision
PYTEST_ARGS ?=

.PHONY: demo test test-slow lint bench venv-test venv-demo clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -U pip

# A stamp per extras set: the install reruns whenever pyproject.toml or this Makefile changes.
$(VENV)/.stamp-%: pyproject.toml Makefile | $(PY)
	$(PIP) install "$(TORCH_SPEC)"
	$(PIP) install -e ".[$*]"
	touch $@

venv-test: $(VENV)/.stamp-$(TEST_EXTRAS)
venv-demo: $(VENV)/.stamp-$(DEMO_EXTRAS)

demo: venv-demo
	$(VENV)/bin/papergym demo --episodes 50 --seed 0

lint: venv-test
	$(VENV)/bin/ruff check papergym tests benchmarks
	$(VENV)/bin/ruff format --check papergym tests benchmarks

test: lint
	$(PY) -m pytest -q -m "not slow" $(PYTEST_ARGS)

test-slow: venv-test
	$(PY) -m pytest -q -m slow $(PYTEST_ARGS)

bench: venv-test
	$(VENV)/bin/papergym bench --write benchmarks/README.md

clean:
	rm -rf $(VENV) build *.egg-info
