# One command each: every target creates or refreshes .venv first.
PYTHON ?= python3
# torch first, on its own: the CPU build that lies on this project's machines. On a laptop without
# it, PyPI's Linux wheel is the multi-GB CUDA build; take the CPU one from PyTorch's index instead:
#     make demo TORCH_INDEX=https://download.pytorch.org/whl/cpu
# (the cluster's GPU rules get their CUDA build from envs/, whatever this venv has).
TORCH_SPEC ?= torch==2.13.0
TORCH_INDEX ?=
CORES ?= 2
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint format bench clean-demo

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -c "import torch" 2>/dev/null || \
		$(BIN)/pip install --quiet $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX)) "$(TORCH_SPEC)"
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

## make demo: the whole demo study (toy world, CPU) -> results/demo/, and its HTML report
# Greedy scheduling, and the job-rate check every 5 s instead of every second: each check
# re-selects among every ready job, which took a quarter of a core (bench/scheduler_overhead.py).
demo: $(STAMP)
	$(BIN)/snakemake all --cores $(CORES) --configfile config/demo.yaml --scheduler greedy \
		--max-jobs-per-timespan 500/5s
	$(BIN)/snakemake --report results/demo/report.html --configfile config/demo.yaml

## make test: lint, formatting, unit tests, DAG tests, the reduced demo end to end
test: lint
	$(BIN)/pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/snakefmt --check Snakefile workflow/rules
	$(BIN)/snakemake --lint --configfile config/demo.yaml
	$(BIN)/snakemake --lint --configfile config/config.yaml

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .
	$(BIN)/snakefmt Snakefile workflow/rules

# The benchmarks: each runs xling beside what a user would use instead and prints the ratio. Every
# bench/*.py is one of them but demo_timing.py, which prints a demo run's times; the measurements
# docs/ cite (most read a finished demo) are in bench/measurements/ (its README): run them by hand.
BENCHES := alignment bpe cka_resamples commoncrawl cpu_compile finetune finetune_batching \
	gpu_check optimizer_startup pooled_batches preprocess pretrain scheduler_overhead stop_agreement \
	toyworld
# bench/gpu_check.py measures GPUs: without one it runs in miniature on the CPU (--smoke).
bench: $(STAMP)
	gpu=$$($(BIN)/python -c "import torch; print(int(torch.cuda.is_available()))"); \
	for b in $(BENCHES); do \
		flags=; [ $$b = gpu_check ] && [ $$gpu = 0 ] && flags=--smoke; \
		$(BIN)/python bench/$$b.py $$flags || exit 1; \
	done

clean-demo:
	rm -rf results/demo
