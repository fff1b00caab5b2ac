#!/usr/bin/env python3
"""The committed golden files (data/golden) hold exactly what the generator makes today: every
tensor the manifest pins has the manifest's xxh3-64 hash, computed here with the `xxhash` package
from the bytes pip-installed `safetensors` reads. Together with `gen --check-manifest` (which
regenerates the cases) this ties the committed files to the current code.

Usage: check_committed_golden.py GOLDEN_DIR
"""
import json
import sys
from pathlib import Path

import xxhash
from safetensors import safe_open


def main():
    folder = Path(sys.argv[1])
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["hash"] == "xxh3-64"
    failures, checked = 0, 0
    for case in manifest["cases"]:
        path = folder / f"{case['name']}.safetensors"
        data = path.read_bytes()
        n = int.from_bytes(data[:8], "little")
        header = json.loads(data[8:8 + n])
        with safe_open(str(path), framework="numpy") as f:  # the file must parse for safetensors too
            meta = f.metadata()
            names = set(f.keys())
        if meta.get("case") != case["case"]:
            print(f"FAIL {path.name}: __metadata__ case '{meta.get('case')}' != manifest '{case['case']}'")
            failures += 1
        for name, want in case["tensors"].items():
            if name not in names:
                print(f"FAIL {path.name}: no tensor {name}")
                failures += 1
                continue
            b, e = header[name]["data_offsets"]
            got = xxhash.xxh3_64_hexdigest(data[8 + n + b:8 + n + e])
            checked += 1
            if got != want:
                print(f"FAIL {path.name}: {name} hashes to {got}, manifest says {want}")
                failures += 1
    print(f"{checked} tensors checked, {failures} failures")
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
