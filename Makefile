# Two commands on a fresh machine: `make conform` and `make test`.
# The virtual environment is built on first use from the pinned lock file.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
BACKEND ?= xla
OUTDIR  ?= out

.PHONY: conform test check-spec bench clean

$(STAMP): requirements.lock pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -r requirements.lock
	$(BIN)/pip install -q --no-deps -e .
	touch $(STAMP)

conform: $(STAMP)
	$(BIN)/shlo-conform --backend=$(BACKEND) --json $(OUTDIR)/results-$(BACKEND).json --html $(OUTDIR)/report-$(BACKEND).html

test: $(STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider tests

check-spec: $(STAMP)
	$(BIN)/shlo-conform check-spec --verifier

bench: $(STAMP)
	$(BIN)/python bench/oracle_vs_interpreter.py

clean:
	rm -rf $(VENV) $(OUTDIR)
