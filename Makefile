# papergym: `make demo` and `make test` each create or refresh .venv, then run.
# torch==2.13.0 (a CPU wheel) is installed before anything that could pull torch in: any other
# torch spec resolves to a multi-GB CUDA build on these machines.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check -q
TORCH_SPEC ?= torch==2.13.0
TEST_EXTRAS ?= dev,llm,remote,retrieval,retrieval-dense,selfplay,vision,view,train,dist,credit,audio,audio-light
DEMO_EXTRAS ?= llm,train,retrieval,vision,audio
# the training part of the demo: SFT warm-start of the tiny model, then GRPO, on one-step arithmetic (the
# tiny LM learns it on a CPU; benchmarks/README.md, `make demo` section, has the measured before/after)
DEMO_ENV ?= --env papergym/Reasoning-v0 --env-kw domain=arith difficulty=1
DEMO_SFT ?= --episodes 3000 --steps 300 --batch-size 32 --lr 2e-3
DEMO_GRPO ?= --steps 100 --prompts-per-step 4 --group-size 8 --max-new-tokens 16 --lr 3e-4 --variant dapo --eval-tasks 400
PYTEST_ARGS ?=
# pytest-xdist processes for `make test` (2: the suite's wall time falls from ~27 to ~17 minutes on 2 cores;
# more cores take more, at ~2 GB of memory each; 0 runs in one process)
TEST_WORKERS ?= 2

.PHONY: demo test chromium test-slow test-verl lint bench venv-test venv-demo clean

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
	$(VENV)/bin/papergym train sft $(DEMO_ENV) $(DEMO_SFT) --out runs/demo/sft
	$(VENV)/bin/papergym train grpo $(DEMO_ENV) $(DEMO_GRPO) --model runs/demo/sft/final --out runs/demo/grpo
	@echo "curves: runs/demo/sft/curves.png runs/demo/grpo/curves.png"

lint: venv-test
	$(VENV)/bin/ruff check papergym tests benchmarks
	$(VENV)/bin/ruff format --check papergym tests benchmarks
	$(VENV)/bin/mypy

# headless Chromium for tests/viewer/test_browser.py: installed with apt-get when root, else those tests skip
chromium:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 \
	  || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
	       && apt-get install -y -q chromium >/dev/null && echo "installed chromium"; } \
	  || echo "chromium not installed (not root or no apt-get): the browser tests will skip"

test: lint chromium
	$(PY) -m pytest -q -n $(TEST_WORKERS) -m "not slow and not verl" $(PYTEST_ARGS)

# verl in its own virtualenv (its transformers pin differs from the rest), torch first as everywhere.
VERL_VENV ?= .venv-verl
test-verl:
	test -x $(VERL_VENV)/bin/python || $(PYTHON) -m venv $(VERL_VENV)
	$(VERL_VENV)/bin/python -m pip --disable-pip-version-check -q install "$(TORCH_SPEC)"
	$(VERL_VENV)/bin/python -m pip --disable-pip-version-check -q install -e ".[verl,llm,dev,retrieval]"
	$(VERL_VENV)/bin/python -m pytest -q -m verl tests/integrations $(PYTEST_ARGS)

test-slow: venv-test
	$(PY) -m pytest -q -m slow $(PYTEST_ARGS)

bench: venv-test
	$(VENV)/bin/papergym bench --write benchmarks/README.md

clean:
	rm -rf $(VENV) build *.egg-info
