# brov2_hybrid: entry points. Everything installs itself: `make run` and
# `make test` work on a fresh Debian 12 machine (root, or sudo).
SHELL := /bin/bash
ARGS ?=

.DEFAULT_GOAL := help
.PHONY: help setup test run bench soak reproduce docs lint clean distclean ardusub mavros

help:
	@echo "make setup      install ROS 1 / venv / catkin workspace (idempotent)"
	@echo "make test       setup (+ MAVROS and ArduSub SITL once, if their sources are at hand), then pytest + rostest + catkin_lint + vermin; last line 'N passed, N failed'"
	@echo "make run        a dive with the hybrid autopilot (ARGS='name:=value ...' for roslaunch; sim:=ardusub = real ArduSub)"
	@echo "make ardusub    build real ArduSub SITL once (cached; ARGS=SOURCE: archive, tree or git URL)"
	@echo "make mavros     build real MAVROS 1.x once (cached; ARGS=ARCHIVE), then set up the workspace on it"
	@echo "make bench      benchmarks (core, simulator, ROS latency, then a 10 min soak; BROV2_SOAK_MIN=0 skips it)"
	@echo "make soak       the soak alone (ARGS='--minutes 2')"
	@echo "make reproduce  rerun the paper's experiments"
	@echo "make docs       regenerate docs/parameters.md from params/*.yaml and cfg/HybridAutopilot.cfg"
	@echo "make lint       catkin_lint and vermin only"
	@echo "make clean      remove the workspace (.ws) and test output; distclean also removes .venv"

setup:
	@bash scripts/setup.sh

test:
	@bash scripts/build_mavros.sh --if-available >/dev/null || echo "make test: the MAVROS build failed; the real-MAVROS tests will say so"
	@bash scripts/setup.sh || { echo "make test: setup failed, no tests run"; echo "0 passed, 1 failed"; exit 1; }
	@bash scripts/build_ardusub.sh --if-available >/dev/null || echo "make test: the ArduSub SITL build failed; the real-ArduSub tests will say so"
	@bash scripts/run_tests.sh

ardusub:
	@bash scripts/build_ardusub.sh $(ARGS)

mavros:
	@bash scripts/build_mavros.sh $(ARGS)
	@bash scripts/setup.sh

run:
	@bash scripts/run_dive.sh $(ARGS)

bench:
	@bash scripts/bench.sh $(ARGS)

soak:
	@bash scripts/setup.sh
	@source scripts/env.sh && python scripts/bench_soak.py $(ARGS)

reproduce:
	@bash scripts/reproduce.sh $(ARGS)

docs:
	@PYTHONPATH=src python3 -m brov2_hybrid.param_docs --out docs/parameters.md

lint:
	@bash scripts/setup.sh
	@bash scripts/run_tests.sh --only catkin_lint --only vermin

clean:
	rm -rf .ws out build devel logs .pytest_cache .hypothesis
	find . -path ./.venv -prune -o -path ./.git -prune -o -name __pycache__ -type d -print0 | xargs -0 rm -rf

distclean: clean
	rm -rf .venv
