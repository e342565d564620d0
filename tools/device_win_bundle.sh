#!/usr/bin/env bash
# Builds .device-win: the Qt bundle (make-bundle.sh gmpy2) trimmed to ~50 MB so that it travels
# with the work tree (~8 MB) and .device-head.tgz (~4 MB) under the device tool's 64 MB: the X/GL
# client libraries packed as xz (unpacked to /tmp/syslib there) and numpy's wheel without its
# tests, type stubs and f2py. PyAV (35 MB) does not fit beside it, so the window's video tests
# skip there; the window's PNG-frame movie tests run.
#   bash tools/device_win_bundle.sh; carry .device-win (and .device-head.tgz)
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
bash ../shared/device/make-bundle.sh gmpy2 > /tmp/device-win-bundle.log 2>&1
rm -rf .device-win && mv .device-bundle .device-win
grep -qxF '/.device-win/' .git/info/exclude || echo '/.device-win/' >> .git/info/exclude
cd .device-win
tar -cJf syslib.tar.xz syslib && rm -rf syslib
python3 - <<'PY'
import glob, os, zipfile
src = glob.glob("whl/numpy-*.whl")[0]
with zipfile.ZipFile(src) as zi, zipfile.ZipFile(src + ".new", "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zo:
    for it in zi.infolist():
        n = it.filename
        if "/tests/" in n or n.endswith(".pyi") or "/f2py/" in n or "/_pyinstaller/" in n:
            continue
        zo.writestr(it, zi.read(n))
os.replace(src + ".new", src)
p = "activate.sh"
s = open(p).read()
s = s.replace('[ -f "$_b"/qt6-trimmed.tar.xz ]',
              '[ -d /tmp/syslib ] || tar -C /tmp -xJf "$_b"/syslib.tar.xz\n[ -f "$_b"/qt6-trimmed.tar.xz ]', 1)
s = s.replace('LD_LIBRARY_PATH="$_b/syslib', 'LD_LIBRARY_PATH="/tmp/syslib')
open(p, "w").write(s)
PY
echo ".device-win: $(du -sh . | cut -f1)"
