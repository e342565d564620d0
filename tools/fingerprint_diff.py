"""Compare two kernel fingerprints (tools/kernel_fingerprint.py --json): kernels only in one, and
kernels whose registers or PTX instruction counts differ.

    python3 tools/fingerprint_diff.py NEW.json BASE.json
"""
import json
import sys


def main(new_path: str, base_path: str) -> int:
    new, base = (json.load(open(p)) for p in (new_path, base_path))
    same = 0
    for key in sorted(set(new) | set(base)):
        a, b = new.get(key), base.get(key)
        if a is None or b is None:
            print(f"only in {'base' if a is None else 'new'}: {key}")
        elif a != b:
            diff = {op: (a["ptx"].get(op, 0), b["ptx"].get(op, 0))
                    for op in set(a["ptx"]) | set(b["ptx"]) if a["ptx"].get(op) != b["ptx"].get(op)}
            print(f"differs: {key}: registers {a['registers']} vs {b['registers']}; {diff}")
        else:
            same += 1
    print(f"{same} kernels identical in registers and PTX instruction counts")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
