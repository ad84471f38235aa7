# benchforge — the two commands that matter: `make build-proactivebench` and `make test`.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
BENCHFORGE := $(VENV)/bin/benchforge
RAW_DIR ?= demo_corpus
OUT ?= out
CONFIG ?= configs/proactivebench.yaml
RUNNER ?=
WORKERS ?=
PROBES ?=
BEAM_ARGS ?=
PB_VERSION := $(shell sed -n 's/^version: *\([0-9.]*\).*/\1/p' $(CONFIG))
RELEASE ?= $(OUT)/proactivebench/$(PB_VERSION)

# Beam runner flags: embedded FnApiRunner unless RUNNER is given; WORKERS>1 uses processes.
RUNNER_ARGS := $(if $(RUNNER),--runner=$(RUNNER),) \
  $(if $(WORKERS),--direct_running_mode=multi_processing --direct_num_workers=$(WORKERS),)
# Per-dataset overrides: COCO_DIR=/data/coco etc.
SOURCE_ARGS := $(foreach e,ROD VSOD MVPN IMAGENET_C QUICKDRAW CHANGEIT COCO,\
  $(if $($(e)_DIR),--source $(shell echo $(e) | tr A-Z a-z)=$($(e)_DIR),))
# The training split (ProactiveBench §5) is built beside the evaluation split; PB_SPLIT=test builds
# the evaluation split only. Its sources elsewhere: COCO_TRAIN_DIR=…, QUICKDRAW_TRAIN_DIR=….
PB_SPLIT ?= train
TRAIN_SOURCE_ARGS := $(foreach e,QUICKDRAW COCO,\
  $(if $($(e)_TRAIN_DIR),--train-source $(shell echo $(e) | tr A-Z a-z)=$($(e)_TRAIN_DIR),))

.PHONY: setup system venv media demo-corpus build-proactivebench check compat-export benchmark \
  test test-fast fuzz lint clean

# Everything the code and the whole test suite use on a fresh machine: Debian tools (ffmpeg,
# chromium, opencv-doc), the project's .venv, the real demo media. Idempotent and quick once done.
setup: system venv media

system:
	@bash scripts/setup_system.sh

venv:
	@bash scripts/setup_env.sh

media: venv
	@bash scripts/fetch_demo_media.sh

demo-corpus: venv
	@if [ "$(RAW_DIR)" = "demo_corpus" ]; then \
	  bash scripts/fetch_demo_media.sh && $(PY) scripts/make_demo_corpus.py --out demo_corpus; fi

build-proactivebench: venv demo-corpus
	$(strip $(BENCHFORGE) build proactivebench --config $(CONFIG) --raw-dir $(RAW_DIR) --out $(OUT) \
	  --split $(PB_SPLIT) $(SOURCE_ARGS) $(if $(filter train,$(PB_SPLIT)),$(TRAIN_SOURCE_ARGS),) \
	  $(if $(PROBES),--probes $(PROBES),) $(RUNNER_ARGS) $(BEAM_ARGS))

check: venv
	$(BENCHFORGE) check $(RELEASE)

# The authors' `proactivebench` layout; --verify replays it in their classes under Python 3.12.
compat-export: venv
	$(BENCHFORGE) export compat-proactivebench $(RELEASE) $(OUT)/proactivebench-compat/$(PB_VERSION) \
	  --overwrite --verify

benchmark: venv demo-corpus
	$(PY) benchmarks/build_proactivebench.py --raw-dir $(RAW_DIR)

# The whole suite (what .ci/run runs): real Label Studio, headless Chromium, Python 3.12 replay.
test: setup
	$(strip $(PY) -m pytest -q tests $(PYTEST_ARGS))

# Day-to-day lane: everything but the Label Studio, browser, Python 3.12 and evaluation-kit tests.
test-fast: setup
	$(strip $(PY) -m pytest -q tests -m "not label_studio and not browser and not py312 and not kits" $(PYTEST_ARGS))

# The readers' and builds' fuzz with more cases than `make test` runs (docs/sources.md §Fuzzing the
# readers): FUZZ_CASES seeded cases per reader, FUZZ_CASES / 15 builds per benchmark.
FUZZ_CASES ?= 300
fuzz: setup
	$(strip BENCHFORGE_FUZZ_CASES=$(FUZZ_CASES) $(PY) -m pytest -q tests/fuzz $(PYTEST_ARGS))

lint: venv
	$(VENV)/bin/ruff check .

clean:
	rm -rf $(OUT) demo_corpus

# ProReady-QA (StreamReady paper): builds candidates and stops at "pending review" until decisions exist.
# REVIEW_MEDIA=mp4|webm|source overrides review.media of the config (mp4: H.264 copies).
PR_CONFIG ?= configs/proready.yaml
PR_VERSION = $(shell sed -n 's/^version: *\([0-9.]*\).*/\1/p' $(PR_CONFIG))
DECISIONS ?=
CORRECTIONS ?=
REVIEW_MEDIA ?=
.PHONY: build-proready demo-release-proready
build-proready: venv
	@bash scripts/setup_system.sh video
	@if [ "$(RAW_DIR)" = "demo_corpus" ]; then \
	  bash scripts/fetch_videos.sh >/dev/null && $(PY) scripts/make_proready_demo.py corpus --out demo_corpus; fi
	$(strip $(BENCHFORGE) build proready --config $(PR_CONFIG) --raw-dir $(RAW_DIR) --out $(OUT) \
	  $(if $(DECISIONS),--decisions $(DECISIONS),) $(if $(CORRECTIONS),--corrections $(CORRECTIONS),) \
	  $(if $(REVIEW_MEDIA),--review-media $(REVIEW_MEDIA),) $(RUNNER_ARGS) $(BEAM_ARGS))

# Demo only: scripted four-reviewer decisions (the card says DEMO), then the release.
demo-release-proready: build-proready
	$(PY) scripts/make_proready_demo.py decisions --review $(OUT)/proready/review/$(PR_VERSION) \
	  --out demo_corpus/proready/review
	$(strip $(BENCHFORGE) build proready --config $(PR_CONFIG) --raw-dir demo_corpus --out $(OUT) \
	  --decisions demo_corpus/proready/review/decisions.demo.jsonl \
	  --corrections demo_corpus/proready/review/corrections.demo.jsonl $(RUNNER_ARGS) $(BEAM_ARGS))

# StreamVibe-Bench (StreamVibe paper): stops at "pending review" until a decision log is given.
# SPLIT=train adds the training split (SFT streams, RL seeds) beside the evaluation split.
SV_CONFIG ?= configs/streamvibe.yaml
SV_VERSION := $(shell sed -n 's/^version: *\([0-9.]*\).*/\1/p' $(SV_CONFIG))
GENERATOR ?=
SPLIT ?=
.PHONY: build-streamvibe demo-release-streamvibe build-streamvibe-train demo-release-streamvibe-train
build-streamvibe: venv
	@bash scripts/setup_system.sh video
	@if [ "$(RAW_DIR)" = "demo_corpus" ]; then \
	  bash scripts/fetch_videos.sh >/dev/null && \
	  $(PY) scripts/make_streamvibe_demo.py corpus --media .cache/demo-media/video --out demo_corpus/streamvibe; fi
	$(strip $(BENCHFORGE) build streamvibe --config $(SV_CONFIG) --raw-dir $(RAW_DIR) --out $(OUT) \
	  $(if $(DECISIONS),--decisions $(DECISIONS),) $(if $(GENERATOR),--generator $(GENERATOR),) \
	  $(if $(SPLIT),--split $(SPLIT),) $(RUNNER_ARGS) $(BEAM_ARGS))

# Demo only: scripted four-reviewer approvals (the decision log's name says demo), then the
# release.
demo-release-streamvibe: build-streamvibe
	$(PY) scripts/make_streamvibe_demo.py decisions --review $(OUT)/streamvibe/review/$(SV_VERSION) \
	  --out demo_corpus/streamvibe-review/decisions.demo.jsonl
	$(strip $(BENCHFORGE) build streamvibe --config $(SV_CONFIG) --raw-dir demo_corpus --out $(OUT) \
	  --decisions demo_corpus/streamvibe-review/decisions.demo.jsonl $(if $(SPLIT),--split $(SPLIT),) \
	  $(RUNNER_ARGS) $(BEAM_ARGS))

# The training split beside the evaluation split (StreamVibe App. B.4; docs/streamvibe.md
# §Training split): pending review, or the release with DECISIONS=<decision log>.
build-streamvibe-train:
	@$(MAKE) --no-print-directory build-streamvibe SPLIT=train

demo-release-streamvibe-train:
	@$(MAKE) --no-print-directory demo-release-streamvibe SPLIT=train

# A real Label Studio on 127.0.0.1 (own venv .venv-ls) with the admin + four reviewers of
# configs/review_panel.yaml; the admin's credentials go to ~/.config/benchforge/label_studio.json,
# each reviewer's to reviewers/r<i>.json beside it (mode 600, folders 700; docs/annotation.md).
# Options: make label-studio LS_ARGS="--port 8081 --data-dir /data/ls --media-root /data/media".
.PHONY: label-studio label-studio-stop
label-studio: venv
	bash scripts/label_studio.sh start $(LS_ARGS)

label-studio-stop:
	bash scripts/label_studio.sh stop $(LS_ARGS)
