#!/usr/bin/env bash
# The GPU tests without Qt, all of them (no -x), and the first failure's traceback in full.
set -u
source ${BUNDLE:-.device-lite}/activate.sh
export PYTHONPATH=.:$PYTHONPATH NUMBA_CACHE_DIR=$PWD/.numba-cache
t0=$(date +%s)
python3 -m pytest -q -p no:cacheprovider -m gpu tests/kernels tests/services tests/cli "$@" 2>&1 \
  | grep -v "Deprecation\|launch.py:6\|_launch_prepared\|warnings$\|^  " | grep -E "^E |Error|FAILED|passed|failed|^tests.*:[0-9]+:" | head -60
echo "gpu tests: $(( $(date +%s) - t0 )) s"
