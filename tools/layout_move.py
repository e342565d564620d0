"""Arrange kernels/mandelbrot/ by concern (issue 36, item 2): move each module into its
subpackage, write each package's one-line face, and rewrite every import and every mention of
the old module names and paths in the repository. Idempotent: run it again (or on a newer tree)
and it does only what is left.

    python3 tools/layout_move.py            # apply to the repository this file is in
    python3 tools/layout_move.py --dry-run  # print what would change, touch nothing
    python3 tools/layout_move.py --repo DIR

The layout is the table LAYOUT below (docs/notes/mandelbrot-layout.md says why); every rewrite is
computed from it: relative and absolute imports (found with ast, re-made relative to the module's
new home), dotted names in strings and text (mock.patch targets, importlib names, `python3 -m`
commands, the import-linter contracts), and paths (kernels/mandelbrot/deep/x.py, deep/x.py).
Moves are `git mv`, so run it in a git work tree. A module added under kernels/mandelbrot/ or
deep/ that the table does not place is reported and left where it is.
"""
from __future__ import annotations

import argparse
import ast
import os
import re
import subprocess
import textwrap
import sys

PKG = "kernels.mandelbrot"

# subpackage -> (its one-line face, [old module names relative to kernels.mandelbrot]).
# An entry "old:new_name" renames the module as it moves (only where two names would clash).
# Listed from the ground up: a package imports only packages listed above it.
LAYOUT = {
    "requests": ("What a frame is asked for: formulas, the frozen requests, number format and type; no numba.",
                 ["formulas", "request", "deep.request:deep_request", "number_format",
                  "number_type", "strips"]),
    "numbers": ("Number systems for compiled code: floatexp, double-double, pow2 scaling, MPFR's C API.",
                ["deep.double_double", "deep.floatexp", "deep.pow2_scale", "deep.orbit_format",
                 "deep.mpfr_lib"]),
    "tables": ("The bilinear approximation (BLA) tables of a reference orbit, in the loops' flat layout.",
               ["deep.bla", "deep.bla_blocks", "deep.bla_ship", "deep.dd_bla", "deep.flat_build",
                "deep.layout"]),
    "loops": ("The per-pixel loops: float64/float32 escape and the deep perturbation and extended loops.",
              ["escape", "escape_gpu", "escape_warp", "formula_twins", "deep.extended_loop",
               "deep.perturbation_loop", "deep.passes_gpu", "deep.rows_cpu", "deep.step_helpers",
               "deep.guard", "deep.targets", "deep.loop_args"]),
    "reference": ("The reference orbit in arbitrary precision: its engines, period stop, caches, nuclei.",
                  ["deep.reference", "deep.reference_gmpy2", "deep.fixed_engine",
                   "deep.mpfr_engine", "deep.mpfr_threads", "deep.spin_barrier",
                   "deep.orbit_floatexp", "deep.orbit_snapshot", "deep.period_stop",
                   "deep.reference_cache", "deep.reference_store", "deep.orbit_scan",
                   "deep.newton", "deep.region_period"]),
    "redo": ("Pixels float64 deltas cannot place, iterated again: MPFR, double-double, exact yardstick.",
             ["deep.exact", "deep.exact_ship", "deep.exact_redo", "deep.mpfr_escape",
              "deep.dd_orbit", "deep.dd_pixels", "deep.gpu_untrusted", "deep.audit"]),
    "colouring": ("Values to RGBA on either backend: the mappings, the Colourer, the overlays' layers.",
                  ["colour", "colour_gpu", "colourer", "picture_colour", "overlays",
                   "overlay_device", "overlay_frames"]),
    "frames": ("Float64 and float32 frames under Renderer: CPU and GPU targets, work count, preview, warm.",
               ["cpu_target", "gpu_target", "targets_f32", "frame_work", "frame_work_gpu",
                "preview", "warm", "frame_steps"]),
    "deep": ("Deep-zoom frames: DeepRenderer, its pixels on CPU or GPU, geometry, sectors, tables ahead.",
             ["deep.renderer", "deep.cpu_pixels", "deep.gpu_pixels", "deep.frame_geometry",
              "deep.result", "deep.sectors", "deep.table_ahead", "deep_work"]),
    "keyframes": ("Zoom movies' paths and exponential-map keyframes: drawn, sampled, assembled, judged.",
                  ["zoom_path", "expmap", "expmap_render", "expmap_sample", "expmap_assemble",
                   "expmap_assemble_gpu", "expmap_quality"]),
    "benches": ("Bench-only code: deep-zoom workloads and places, published locations, bench launches.",
                ["deep.bench", "deep.place_bench", "deep.locations", "escape_variants",
                 "launch_settings"]),
}
# stay at kernels/mandelbrot/ (found there by name: kernels.jobs, kernels.bench, services.render)
TOP = ["renderer", "jobs", "bench", "deep_frames", "tiles", "compare"]

# names a module imported from another (or a package re-exported) that now have a home of their
# own: (old module, name) -> old module that defines it (mapped like the rest)
REHOME = {
    ("deep.reference", "EZERO"): "deep.orbit_format",
    ("deep", "DeepRequest"): "deep.request",
}

# module names made at run time (f-strings): exact text -> its new text, and the scan after the
# rewrite reports any other "kernels.mandelbrot[.deep].{" left
DYNAMIC = {
    # tests/kernels/test_expmap_one_launch.py: module in ("perturbation_loop", "extended_loop")
    "kernels.mandelbrot.deep.{module}": "kernels.mandelbrot.loops.{module}",
}

# import-linter: the layers above as a contract (top first)
CONTRACT_ID = "mandelbrot-layers"
CONTRACT = f'''
[[tool.importlinter.contracts]]
id = "{CONTRACT_ID}"
name = "kernels.mandelbrot's packages are layers: each imports only those below it (docs/notes/mandelbrot-layout.md)"
type = "layers"
containers = ["kernels.mandelbrot"]
layers = [
    "bench",
    "tiles",
    "jobs",
    "deep_frames : compare",
    "renderer",
    "benches",
    "keyframes",
    "deep",
    "frames",
    "colouring : redo",
    "reference",
    "loops",
    "tables",
    "numbers : requests",
]
'''

TEXT_EXT = (".py", ".md", ".toml", ".cfg", ".ini", ".txt", ".sh", ".in", ".rst", ".json",
            ".yml", ".yaml", ".importlinter")


def build_map():
    """old dotted name (full) -> new dotted name (full), for modules that move."""
    m = {}
    for pkg, (_, mods) in LAYOUT.items():
        for entry in mods:
            old, _, new_name = entry.partition(":")
            new_name = new_name or old.rsplit(".", 1)[-1]
            if f"{PKG}.{old}" != f"{PKG}.{pkg}.{new_name}":
                m[f"{PKG}.{old}"] = f"{PKG}.{pkg}.{new_name}"
    return m


def mod_path(root, dotted, pkg=False):
    rel = dotted.replace(".", "/")
    return os.path.join(root, rel, "__init__.py") if pkg else os.path.join(root, rel + ".py")


def git(root, *args, check=True):
    return subprocess.run(["git", *args], cwd=root, check=check, capture_output=True, text=True)


def tracked(root):
    out = git(root, "ls-files", "-z").stdout.split("\0")
    return [p for p in out if p and os.path.isfile(os.path.join(root, p))]


def module_of(relpath):
    """dotted module name of a repo-relative .py path, and whether it is a package's __init__."""
    parts = relpath[:-3].split("/")
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


class ImportRewriter:
    def __init__(self, mapping, modules):
        self.map = mapping
        self.modules = modules          # every module/package name known (old and new)
        self.rehome = {(f"{PKG}.{a}" if a else PKG, n): f"{PKG}.{b}" for (a, n), b in REHOME.items()}

    def new(self, name):
        return self.map.get(name, name)

    def rewrite(self, src, cur_mod, is_pkg):
        try:
            tree = ast.parse(src)
        except SyntaxError:
            return src, []
        dest_mod = self.new(cur_mod)
        cur_pkg = cur_mod if is_pkg else cur_mod.rpartition(".")[0]
        dest_pkg = dest_mod if is_pkg else dest_mod.rpartition(".")[0]
        lines = src.splitlines(keepends=True)
        offs = [0]
        for ln in lines:
            offs.append(offs[-1] + len(ln))
        edits, notes = [], []
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                parts = cur_pkg.split(".")
                if node.level - 1 > len(parts) - 1:
                    continue
                base_parts = parts[:len(parts) - (node.level - 1)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module
            if not base or not (base == "kernels" or base.startswith("kernels.")):
                continue
            groups = {}     # target module -> [(name, asname)]
            for a in node.names:
                full = f"{base}.{a.name}"
                if a.name != "*" and full in self.modules:
                    nf = self.new(full)
                    tgt, _, nm = nf.rpartition(".")
                    asn = a.asname or (a.name if nm != a.name else None)
                    groups.setdefault(tgt, []).append((nm, asn))
                else:
                    home = self.rehome.get((base, a.name))
                    tgt = self.new(home) if home else self.new(base)
                    groups.setdefault(tgt, []).append((a.name, a.asname))
            renamed = any(nm != a.name or asn != a.asname
                          for (nm, asn), a in zip([x for g in groups.values() for x in g], node.names)) \
                if len(groups) == 1 else True
            moved_file = dest_pkg != cur_pkg
            if len(groups) == 1 and next(iter(groups)) == base and not moved_file:
                continue

            def spec(tgt):
                if not node.level:
                    return tgt
                d, t = dest_pkg.split("."), tgt.split(".")
                k = 0
                while k < min(len(d), len(t)) and d[k] == t[k]:
                    k += 1
                return "." * (len(d) - k + 1) + ".".join(t[k:])

            start = offs[node.lineno - 1] + node.col_offset
            end = offs[node.end_lineno - 1] + node.end_col_offset
            if len(groups) == 1 and not renamed:
                tgt = next(iter(groups))
                m = re.match(r"from\s+([.\w]+)\s+import", src[start:end])
                if not m:
                    notes.append(f"{cur_mod}:{node.lineno}: cannot read the import, left as is")
                    continue
                edits.append((start + m.start(1), start + m.end(1), spec(tgt)))
                continue
            stmts = []
            for tgt, names in groups.items():
                ns = ", ".join(n + (f" as {s}" if s else "") for n, s in names)
                stmts.append(f"from {spec(tgt)} import {ns}")
            line = lines[node.lineno - 1]
            indent = line[:node.col_offset]
            sep = ("\n" + indent) if indent.strip() == "" else "; "
            old_text = src[start:end]
            if "#" in old_text:
                notes.append(f"{cur_mod}:{node.lineno}: comments inside a split import were dropped")
            edits.append((start, end, sep.join(stmts)))
        for s, e, t in sorted(edits, reverse=True):
            src = src[:s] + t + src[e:]
        return src, notes


def text_rules(mapping):
    """(compiled regex, replacement) for dotted names and paths, longest names first."""
    rules = []
    for old in sorted(mapping, key=len, reverse=True):
        new = mapping[old]
        rules.append((re.compile(r"(?<![\w.])" + re.escape(old) + r"(?![\w])"), new))
    for old in sorted(mapping, key=len, reverse=True):
        new = mapping[old]
        op, np_ = old.replace(".", "/") + ".py", new.replace(".", "/") + ".py"
        rules.append((re.compile(r"(?<![\w./])" + re.escape(op) + r"(?![\w])"), np_))
        # short forms inside kernels/mandelbrot's prose: mandelbrot/deep/x.py, deep/x.py
        short_old = op[len("kernels/"):]
        rules.append((re.compile(r"(?<![\w./])" + re.escape(short_old) + r"(?![\w])"),
                      np_[len("kernels/"):]))
        if old.startswith(f"{PKG}.deep."):
            # deep/x.py and deep/x.name in prose (a file, or a name in it)
            so = op[len("kernels/mandelbrot/"):-3]
            rules.append((re.compile(r"(?<![\w./])" + re.escape(so) + r"(?![\w/])"),
                          np_[len("kernels/mandelbrot/"):-3]))
    return rules


_FROM = re.compile(r"(?<![\w.])from\s+(kernels\.mandelbrot(?:\.deep)?)\s+import\s+"
                   r"(\w+(?:\s+as\s+\w+)?(?:[ \t]*,[ \t]*\w+(?:\s+as\s+\w+)?)*)")


def from_lines(text, mapping):
    """`from kernels.mandelbrot[.deep] import a, b` written in text (code in a string, a shell
    line, docs): the names that are modules go to their new packages (one statement a package,
    joined by "; ")."""
    rehome = {(f"{PKG}.{a}" if a else PKG, n): f"{PKG}.{b}" for (a, n), b in REHOME.items()}

    def sub(m):
        base, groups = m.group(1), {}
        for item in re.split(r"[ \t]*,[ \t]*", m.group(2)):
            name, _, asn = (x.strip() for x in item.partition(" as "))
            full = f"{base}.{name}"
            if full in mapping:
                tgt, _, nm = mapping[full].rpartition(".")
                asn = asn or (name if nm != name else "")
            else:
                home = rehome.get((base, name))
                nm, tgt = name, (mapping.get(home, home) if home else base)
            groups.setdefault(tgt, []).append(nm + (f" as {asn}" if asn else ""))
        if list(groups) == [base]:
            return m.group(0)
        return "; ".join(f"from {t} import {', '.join(ns)}" for t, ns in groups.items())
    return _FROM.sub(sub, text)


def apply_text(text, rules, mapping):
    for old, new in DYNAMIC.items():
        text = text.replace(old, new)
    text = from_lines(text, mapping)
    for rx, new in rules:
        text = rx.sub(new, text)
    return text


def face(doc):
    return f'"""{doc}"""\n'


def top_face(old):
    """kernels/mandelbrot/__init__.py: the package list in its docstring, the rest kept."""
    lines = ["The Mandelbrot workload: escape-time kernels for the GPU beside their CPU twins.", "",
             "Its packages, from the ground up (each stands only on those listed before it; the",
             "import-linter contract \"" + CONTRACT_ID + "\" in pyproject.toml holds them to it):", ""]
    for pkg, (doc, _) in LAYOUT.items():
        lines += textwrap.wrap(f"- `{pkg}/`: {doc}", 99, subsequent_indent="  ")
    lines += ["", "At the top, found by name: `renderer` (Renderer, services.render), `jobs` (the "
              "scheduler's", "handlers, kernels.jobs), `bench` (the `--bench` workloads, "
              "kernels.bench); `deep_frames`", "(DeepFrameRenderer), `tiles` (bands and frames as "
              "jobs for a pool), `compare` (both number types).", ""]
    m = re.search(r"\n(May import:.*?)\"\"\"", old, re.S)
    if m:
        lines.append(m.group(1).rstrip())
    body = "\n".join(lines)
    rest = old
    dm = re.match(r'\s*""".*?"""\n?', old, re.S)
    if dm:
        rest = old[dm.end():]
    return f'"""{body}\n"""\n' + rest


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--dry-run", action="store_true")
    args = ap.parse_args(argv)
    root = os.path.abspath(args.repo)
    mapping = build_map()
    dry = args.dry_run
    say = print

    # 1. which moves are left; modules the table does not know
    placed = {f"{PKG}.{e.partition(':')[0]}" for _, ms in LAYOUT.values() for e in ms}
    placed |= {f"{PKG}.{t}" for t in TOP}
    moves = []
    for old, new in mapping.items():
        op, np_ = mod_path(root, old), mod_path(root, new)
        if os.path.exists(op) and os.path.exists(np_):
            sys.exit(f"both {op} and {np_} exist: resolve by hand")
        if os.path.exists(op):
            moves.append((op, np_))
        elif not os.path.exists(np_):
            say(f"note: {old} is neither at its old nor its new place (gone upstream?)")
    for d, dotted in ((os.path.join(root, "kernels/mandelbrot"), PKG),
                      (os.path.join(root, "kernels/mandelbrot/deep"), PKG + ".deep")):
        for f in sorted(os.listdir(d)):
            if f.endswith(".py") and f != "__init__.py":
                name = f"{dotted}.{f[:-3]}"
                if name not in placed and name not in mapping.values():
                    say(f"UNPLACED: {name} is in no package of the table: left where it is")

    # 2. every module name, old and new, for telling submodules from attributes
    modules = set(mapping) | set(mapping.values()) | {f"{PKG}.{p}" for p in LAYOUT} | {PKG}
    for p in tracked(root):
        if p.endswith(".py"):
            modules.add(module_of(p)[0])

    # 3. imports (ast), then names and paths (text), in every tracked text file
    rw = ImportRewriter(mapping, modules)
    rules = text_rules(mapping)
    changed = 0
    for p in tracked(root):
        if not p.endswith(TEXT_EXT) and os.path.basename(p) not in ("MANIFEST.in",):
            continue
        if p == "tools/layout_move.py" or p.startswith("docs/notes/mandelbrot-layout"):
            continue
        full = os.path.join(root, p)
        try:
            with open(full, encoding="utf-8") as fh:
                src = fh.read()
        except (UnicodeDecodeError, OSError):
            continue
        new = src
        if p.endswith(".py"):
            mod, is_pkg = module_of(p)
            new, notes = rw.rewrite(new, mod, is_pkg)
            for n in notes:
                say("note: " + n)
        new = apply_text(new, rules, mapping)
        if new != src:
            changed += 1
            if dry:
                say(f"rewrite {p}")
            else:
                with open(full, "w", encoding="utf-8") as fh:
                    fh.write(new)

    dyn = re.compile(r"kernels\.mandelbrot\.(?:deep\.)?\{")
    for p in tracked(root):
        if p.endswith(".py") and p != "tools/layout_move.py":
            with open(os.path.join(root, p), encoding="utf-8", errors="replace") as fh:
                for i, ln in enumerate(fh, 1):
                    if dyn.search(ln):
                        say(f"CHECK by hand: a module name made at run time: {p}:{i}: {ln.strip()}")

    # 4. the moves, the packages' faces
    for pkg, (doc, _) in LAYOUT.items():
        d = os.path.join(root, "kernels/mandelbrot", pkg)
        init = os.path.join(d, "__init__.py")
        want = face(doc)
        have = open(init).read() if os.path.exists(init) else None
        if have != want:
            say(f"face {os.path.relpath(init, root)}")
            if not dry:
                os.makedirs(d, exist_ok=True)
                with open(init, "w") as fh:
                    fh.write(want)
                git(root, "add", os.path.relpath(init, root))
    for op, np_ in moves:
        say(f"git mv {os.path.relpath(op, root)} {os.path.relpath(np_, root)}")
        if not dry:
            os.makedirs(os.path.dirname(np_), exist_ok=True)
            git(root, "mv", os.path.relpath(op, root), os.path.relpath(np_, root))
    top = os.path.join(root, "kernels/mandelbrot/__init__.py")
    old = open(top).read()
    want = top_face(old)
    if want != old:
        say("face kernels/mandelbrot/__init__.py (the package list)")
        if not dry:
            with open(top, "w") as fh:
                fh.write(want)

    # 5. the layers contract
    pp = os.path.join(root, "pyproject.toml")
    text = open(pp).read()
    if f'id = "{CONTRACT_ID}"' not in text:
        say(f"pyproject.toml: add the import-linter contract {CONTRACT_ID}")
        if not dry:
            with open(pp, "a") as fh:
                fh.write(CONTRACT)
    say(f"{len(moves)} module(s) moved, {changed} file(s) rewritten" + (" (dry run)" if dry else ""))


if __name__ == "__main__":
    main()
