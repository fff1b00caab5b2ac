#!/usr/bin/env python3
"""Checks that safetensors files written by mlacheck load in Python exactly as mlacheck meant them.

For each FILE it loads the file with pip-installed `safetensors` (framework="numpy") and compares
with a parse of the header done by hand here:
  - the same tensor names, dtypes, shapes and __metadata__;
  - for dtypes NumPy has (F16, F32, F64, I32, I64, U8), get_tensor() returns the bytes stored at
    the tensor's data_offsets, with the matching NumPy dtype;
  - for BF16 / F8_E4M3 / F8_E8M0 (no NumPy dtype) get_slice(name).get_dtype()/get_shape() match
    and the raw bytes are taken from the file by hand;
  - mlacheck's writer promises: header length a multiple of 8, each tensor aligned to its size.
With an expectation (--expect JSON, or FILE's sibling <stem>.expect.json if present) it also
checks the contents: {"metadata": {...}, "tensors": {name: {"dtype", "shape", "hex"?, "values"?}}}
("hex" = raw bytes, "values" = decoded numbers for NumPy dtypes).

The other direction: --write-python-file OUT writes a file with Python safetensors (every dtype
NumPy has, 0-d and empty arrays, metadata) and OUT's <stem>.expect.json; the C++ test
IoInterop.ReadsAFileWrittenByPython reads $MLACHECK_INTEROP_DIR/python_written.safetensors.

Usage:
  check_safetensors_interop.py [-v] [--expect EXPECT.json] FILE.safetensors [FILE ...]
  check_safetensors_interop.py --write-python-file OUT.safetensors
Typical flow, both directions:
  export MLACHECK_INTEROP_DIR=/tmp/interop
  python3 scripts/python/check_safetensors_interop.py --write-python-file $MLACHECK_INTEROP_DIR/python_written.safetensors
  <gtest binary or `mlacheck selftest`> --gtest_filter='IoInterop.*'
  python3 scripts/python/check_safetensors_interop.py $MLACHECK_INTEROP_DIR/mlacheck_all_dtypes.safetensors
Exit status: 0 all checks passed, 1 a check failed, 2 bad usage.
"""
import argparse
import json
import struct
import sys
from pathlib import Path

import numpy as np
from safetensors import safe_open

NUMPY_DTYPES = {"F16": np.float16, "F32": np.float32, "F64": np.float64,
                "I32": np.int32, "I64": np.int64, "U8": np.uint8}
DTYPE_SIZES = {"BF16": 2, "F16": 2, "F32": 4, "F64": 8, "I32": 4, "I64": 8, "U8": 1,
               "F8_E4M3": 1, "F8_E8M0": 1}


class Checker:
    def __init__(self, verbose):
        self.failures = []
        self.passed = 0
        self.verbose = verbose

    def check(self, cond, what):
        self.passed += bool(cond)
        if self.verbose or not cond:
            print(("ok   " if cond else "FAIL ") + what)
        if not cond:
            self.failures.append(what)
        return cond


def read_by_hand(path):
    """(header length, header dict, data buffer) parsed without the safetensors library."""
    blob = Path(path).read_bytes()
    (n,) = struct.unpack("<Q", blob[:8])
    return n, json.loads(blob[8:8 + n]), blob[8 + n:]


def check_file(path, expect, c):
    name_of = f"{path.name}"
    n, header, data = read_by_hand(path)
    c.check(n % 8 == 0, f"{name_of}: header length {n} is a multiple of 8")
    entries = {k: v for k, v in header.items() if k != "__metadata__"}

    with safe_open(str(path), framework="numpy") as f:
        c.check(set(f.keys()) == set(entries), f"{name_of}: safetensors sees the same tensor names")
        c.check((f.metadata() or {}) == header.get("__metadata__", {}),
                f"{name_of}: safetensors sees the same __metadata__")
        for name, info in sorted(entries.items()):
            where = f"{name_of}: tensor '{name}'"
            begin, end = info["data_offsets"]
            raw = data[begin:end]
            sl = f.get_slice(name)
            c.check(sl.get_dtype() == info["dtype"], f"{where}: dtype {sl.get_dtype()} == {info['dtype']}")
            c.check(list(sl.get_shape()) == info["shape"], f"{where}: shape {sl.get_shape()} == {info['shape']}")
            size = DTYPE_SIZES.get(info["dtype"])
            c.check(size is not None and begin % size == 0, f"{where}: offset {begin} aligned to its dtype")
            if info["dtype"] in NUMPY_DTYPES:
                array = f.get_tensor(name)
                c.check(array.dtype == NUMPY_DTYPES[info["dtype"]] and list(array.shape) == info["shape"]
                        and array.tobytes() == raw, f"{where}: get_tensor gives the stored bytes")
            if expect is not None:
                check_expected(where, info, raw, expect["tensors"].get(name), c)

    if expect is not None:
        c.check(set(expect["tensors"]) == set(entries), f"{name_of}: the expected tensor names")
        if "metadata" in expect:
            c.check(header.get("__metadata__", {}) == expect["metadata"], f"{name_of}: the expected metadata")


def check_expected(where, info, raw, want, c):
    if not c.check(want is not None, f"{where}: is expected"):
        return
    c.check(info["dtype"] == want["dtype"] and info["shape"] == want["shape"],
            f"{where}: expected dtype/shape {want['dtype']} {want['shape']}")
    if "hex" in want:
        c.check(raw.hex() == want["hex"], f"{where}: raw bytes as expected")
    if "values" in want:
        if not c.check(info["dtype"] in NUMPY_DTYPES, f"{where}: 'values' given for a NumPy dtype"):
            return
        got = np.frombuffer(raw, dtype=NUMPY_DTYPES[info["dtype"]]).reshape(info["shape"])
        exp = np.array(want["values"], dtype=NUMPY_DTYPES[info["dtype"]]).reshape(info["shape"])
        # Bitwise (array_equal would call -0.0 == 0.0).
        c.check(got.tobytes() == exp.tobytes(), f"{where}: values as expected")


def expect_path_of(path):
    return path.with_name(path.name.removesuffix(".safetensors") + ".expect.json")


def write_python_file(out):
    """A file written by the reference library, for the C++ reader, and what it holds."""
    from safetensors.numpy import save_file
    arrays = {
        "f16": np.array([[1.0, -2.0, 65504.0], [6e-8, 0.0, -0.0]], dtype=np.float16),
        "f32": np.array([1.5, -0.0, np.inf, np.nan], dtype=np.float32),
        "f64": np.array([1.0 / 3.0, -1e300, 5e-324], dtype=np.float64),
        "i32": np.array([np.iinfo(np.int32).min, -1, np.iinfo(np.int32).max], dtype=np.int32),
        "i64": np.array([[np.iinfo(np.int64).min], [np.iinfo(np.int64).max]], dtype=np.int64),
        "u8": np.arange(0, 256, 17, dtype=np.uint8),
        "scalar": np.array(7, dtype=np.int64),
        "empty_2x0": np.zeros((2, 0), dtype=np.float32),
    }
    metadata = {"writer": "python safetensors", "note": "unicode \u00e9"}
    out.parent.mkdir(parents=True, exist_ok=True)
    save_file(arrays, str(out), metadata=metadata)
    names = {v: k for k, v in NUMPY_DTYPES.items()}
    expect = {"metadata": metadata, "tensors": {
        name: {"dtype": names[a.dtype.type], "shape": list(a.shape), "hex": a.tobytes().hex()}
        for name, a in arrays.items()}}
    expect_path_of(out).write_text(json.dumps(expect, indent=1) + "\n")
    print(f"wrote {out} and {expect_path_of(out).name}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--expect", type=Path, help="expectation JSON (only with a single FILE)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print passing checks too")
    parser.add_argument("--write-python-file", type=Path, metavar="OUT",
                        help="write a file with Python safetensors for the C++ reader, then exit")
    parser.add_argument("files", type=Path, nargs="*")
    args = parser.parse_args()
    if args.write_python_file:
        write_python_file(args.write_python_file)
        return 0
    if not args.files:
        parser.error("no FILE given")
    if args.expect and len(args.files) != 1:
        parser.error("--expect applies to one FILE; use <stem>.expect.json siblings for several")
    c = Checker(args.verbose)
    for path in args.files:
        expect_path = args.expect or expect_path_of(path)
        expect = json.loads(expect_path.read_text()) if expect_path.exists() else None
        if args.expect is None and expect is None:
            print(f"note {path.name}: no {expect_path.name}, checking structure only")
        check_file(path, expect, c)
    print(f"{len(c.failures)} of {len(c.failures) + c.passed} checks failed" if c.failures
          else f"all {c.passed} interop checks passed")
    return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main())
