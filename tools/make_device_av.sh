#!/usr/bin/env bash
# Builds .device-av/ (git-ignored): what the GPU machine lacks for the headless movie and deep
# benchmarks, small enough to travel with the work tree and numba's cache (64 MB in all): numpy 2.4,
# gmpy2, PyAV, cupti-python with pyelftools, unpacked and packed again with xz (a wheel's deflate
# leaves ~10 MB more), and pyqtgraph's wheel for its colour maps (no Qt). On the GPU machine:
#   source .device-av/activate.sh && PYTHONPATH=.:$PYTHONPATH python3 …
# (a second `source` in the same machine unpacks nothing again).
set -euo pipefail
root=$(git rev-parse --show-toplevel); out="$root/.device-av"; tmp=$(mktemp -d)
grep -qxF '/.device-av/' "$root/.git/info/exclude" 2>/dev/null || echo '/.device-av/' >> "$root/.git/info/exclude"
dl() { python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -d "$tmp/whl" "$@" 2>&1 | grep -v '^WARNING' || true; }
dl 'numpy>=2.4,<2.5' gmpy2 av cupti-python pyelftools pyqtgraph
mkdir -p "$tmp/site" "$out/whl"
for w in "$tmp"/whl/*.whl; do
  case $(basename "$w") in pyqtgraph-*) cp "$w" "$out/whl/" ;; *) unzip -q -o "$w" -d "$tmp/site" ;; esac
done
rm -rf "$tmp/site/cupti-python-samples"; find "$tmp/site/numpy" -name tests -type d -prune -exec rm -rf {} +
tar -C "$tmp/site" -cf - . | xz -T0 -9 > "$out/site.tar.xz"
cat > "$out/activate.sh" <<'SH'
# source this on the GPU machine, from the project root: numpy 2.4, gmpy2, PyAV, cupti-python,
# pyqtgraph (its colour maps; no Qt). A second source in the same machine unpacks nothing again.
_b="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ ! -f /tmp/site/.device-av-done ]; then
  mkdir -p /tmp/site && tar -C /tmp/site -xJf "$_b"/site.tar.xz || return 1
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site "$_b"/whl/*.whl || return 1
  touch /tmp/site/.device-av-done
fi
export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
export QT_QPA_PLATFORM=offscreen
SH
rm -rf "$tmp"; du -sh "$out"
