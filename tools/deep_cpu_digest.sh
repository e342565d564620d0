#!/usr/bin/env bash
# The CPU twin's deep frames (perturbation with float64 and float32 deltas, extended, each deep
# overlay, KF's 5e227) written as .npy by a tree, so that a refactor of the loops can be checked
# byte for byte against the tree before it (BACKEND=cuda: the GPU's, and the float64/float32 loops;
# KF=DIR where ../shared is not beside the tree) (docs/CONTRACTS.md, "A refactor of the GPU loops"):
#   bash tools/deep_cpu_digest.sh . /tmp/new && bash tools/deep_cpu_digest.sh /tmp/base /tmp/old
#   for f in /tmp/new/*.npy; do cmp "$f" "/tmp/old/${f##*/}" || echo "differs: ${f##*/}"; done
set -u
tree=$(cd "${1:?usage: deep_cpu_digest.sh TREE OUTDIR}" && pwd); out=$(mkdir -p "${2:?}" && cd "$2" && pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
kf=${KF:-$here/../shared/data/kf-benchmarks}
py=${PYTHON:-$here/.venv/bin/python}
c="-1.99999911758766165543764649311537154663,0"
ov="iterations,bla-steps,perturbation-steps,rebases,redone"
run() {
  name=$1; shift
  case " ${ONLY:-$name} " in *" $name "*) ;; *) return ;; esac    # ONLY="ext kf5": those alone
  (cd "$tree" && "$py" main.py --render mandelbrot --backend "${BACKEND:-cpu}" --out "$out/$name.npy" "$@" \
     > "$out/$name.log" 2>&1)
  echo "$name rc=$?"
}
run pert --size 48x32 --center "$c" --width 1e-100 --iters 3000
run pert_ov --size 48x32 --center "$c" --width 1e-100 --iters 3000 --overlay "$ov"
run f32 --size 48x32 --center "$c" --width 1e-20 --iters 3000 --number-type float32
run ext --size 48x32 --location "$kf/1e1086.kfr" --iters 3000
run ext_ov --size 48x32 --location "$kf/1e1086.kfr" --iters 3000 --overlay "$ov"
run kf5 --size 32x32 --location "$kf/5e227.kfr"
if [ "${BACKEND:-cpu}" != cpu ]; then     # the float64 and float32 escape loops too
  run f64 --size 96x64 --center -0.75,0.1 --width 2.5 --iters 500
  run f64_ov --size 96x64 --center -0.75,0.1 --width 2.5 --iters 500 --overlay iterations
  run f64_32 --size 96x64 --center -0.75,0.1 --width 2.5 --iters 500 --number-type float32
fi
