#!/usr/bin/env python3
"""Writes the committed seed corpus of fuzz/ (fuzz/corpus/<target>/), so every seed can be remade
and reviewed: small valid inputs of each parser's format (each file < 64 KiB, the targets'
-max_len), from which libFuzzer's mutations reach the error paths. Standard library only.
Crash inputs that CI finds are added to the corpus by hand, beside these.
Usage: python3 fuzz/make_seeds.py   (overwrites only the files named here)"""
import json
import pathlib
import shutil
import struct

ROOT = pathlib.Path(__file__).resolve().parent
REPO = ROOT.parent
DTYPE_SIZE = {"BF16": 2, "F16": 2, "F32": 4, "F64": 8, "I32": 4, "I64": 8, "U8": 1,
              "F8_E4M3": 1, "F8_E8M0": 1}


def safetensors(tensors, metadata=None):
    """tensors: list of (name, dtype, shape, bytes), laid out in that order (safetensors format:
    u64 header length, JSON header padded with spaces to 8 bytes, data buffer)."""
    header, data = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape, raw in tensors:
        n = DTYPE_SIZE[dtype]
        for d in shape:
            n *= d
        assert len(raw) == n, name
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + n]}
        data += raw
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def bf16(values):  # float -> bf16 bits by truncation (the values below are exact in bf16)
    return b"".join(struct.pack("<f", v)[2:] for v in values)


def f32(values):
    return struct.pack(f"<{len(values)}f", *values)


def i32(values):
    return struct.pack(f"<{len(values)}i", *values)


def pattern(n, step=7):  # small finite values on a bf16 grid: k/8 for k in -3..3
    return [((i * step) % 7 - 3) / 8 for i in range(n)]


GOLDEN_META = {"schema": "mlacheck-golden/1", "generator": "fuzz/make_seeds.py", "page_size": "1",
               "fp8_format": "e4m3fn", "mxfp4_rounding": "rne"}
RECIPES = {"a16w16": "32:0", "a16w8": "32:0", "a8w8": "32:0", "a8w8-static": "32:0",
           "a8w8-cast": "8:0", "a16w4": "8:64", "a4w4": "4:32"}


def golden(qo, kvp, indices, page_size, rows, with_caches, recipes=()):
    """A golden file (io/golden.h schema) of the given layout: inputs, caches, out_exact and
    lse_exact with finite values (the readers check finiteness and shapes, not the numbers)."""
    t = qo[-1]
    meta = dict(GOLDEN_META, page_size=str(page_size))
    ts = [("qo_indptr", "I32", [len(qo)], i32(qo)), ("kv_indptr", "I32", [len(kvp)], i32(kvp))]
    if indices:
        ts.append(("kv_indices", "I32", [len(indices)], i32(indices)))
    ts += [("q", "BF16", [t, 16, 576], bf16(pattern(t * 16 * 576))),
           ("kv", "BF16", [rows, 1, 576], bf16(pattern(rows * 576, 5)))]
    if with_caches:
        fp8_codes = bytes((i * 13) % 0x7E for i in range(rows * 576))  # finite: never 0x7F / 0xFF
        ts += [("kv_fp8", "F8_E4M3", [rows, 1, 576], fp8_codes),
               ("kv_fp8_scale", "F32", [1], f32([0.0078125])),
               ("kv_mxfp4", "U8", [rows, 1, 288], bytes((i * 29) % 256 for i in range(rows * 288))),
               ("kv_mxfp4_scale", "F8_E8M0", [rows, 1, 18], bytes([127] * (rows * 18)))]
    ts += [("out_exact", "F32", [t, 16, 512], f32(pattern(t * 16 * 512))),
           ("lse_exact", "F32", [t, 16], f32([1.5] * (t * 16)))]
    for r in recipes:
        ts += [(f"out_{r}", "BF16", [t, 16, 512], bf16(pattern(t * 16 * 512))),
               (f"lse_{r}", "F32", [t, 16], f32([1.5] * (t * 16)))]
    if recipes:
        meta["recipes"] = ",".join(recipes)
        meta["recipe_schedules"] = ",".join(f"{r}:{RECIPES[r]}" for r in recipes)
    return safetensors(ts, meta)


def write(target, name, data):
    path = ROOT / "corpus" / target / name
    path.parent.mkdir(parents=True, exist_ok=True)
    assert len(data) < 64 * 1024, f"{path}: {len(data)} bytes"
    path.write_bytes(data.encode() if isinstance(data, str) else data)


def main():
    for target in ("safetensors_reader", "golden_reader", "case_list", "manifest"):
        (ROOT / "corpus" / target).mkdir(parents=True, exist_ok=True)
    # safetensors reader: every dtype, 0-d and empty tensors, metadata, an empty file.
    every = [(f"t_{d.lower()}", d, [2, 3], bytes(range(6 * DTYPE_SIZE[d]))) for d in DTYPE_SIZE]
    write("safetensors_reader", "every_dtype.safetensors", safetensors(every, {"k": "v", "": "é"}))
    write("safetensors_reader", "empty_shapes.safetensors", safetensors(
        [("scalar", "F32", [], f32([2.0])), ("none", "I64", [0], b""), ("rows0", "U8", [0, 7], b""),
         ("cols0", "BF16", [3, 0], b""), ("v", "F64", [1, 1, 1], struct.pack("<d", 1.0))]))
    # Shapes whose product overflows but for a 0 (no bytes): a reader or a consumer that multiplies
    # the dimensions in the wrong order overflows (UB) before it reaches the 0.
    overflow = safetensors([("out", "F32", [2**32, 2**32, 0, 16, 512], b""),
                            ("lse", "F32", [0, 2**62, 2**62, 16], b"")])
    write("safetensors_reader", "zero_dim_overflow.safetensors", overflow)
    write("golden_reader", "zero_dim_overflow.safetensors", overflow)
    write("safetensors_reader", "header_only.safetensors", safetensors([], {"schema": "x"}))
    write("safetensors_reader", "nothing.safetensors", safetensors([]))
    empty_golden = golden([0], [0], [], 1, 0, True, list(RECIPES))
    write("safetensors_reader", "golden_b0.safetensors", empty_golden)

    # golden reader (compare): a batch of one with both caches; a paged one without caches; an
    # empty batch with every preset's stored output and schedule.
    write("golden_reader", "b1_kv2_caches.safetensors", golden([0, 1], [0, 2], [], 1, 2, True))
    write("golden_reader", "b1_kv3_paged.safetensors", golden([0, 1], [0, 3], [1, 0], 2, 4, False))
    write("golden_reader", "b0_every_recipe.safetensors", empty_golden)

    # case lists: the committed lists, and one line of every key and spelling the format allows.
    for src in sorted((REPO / "data" / "cases").glob("*.txt")):
        shutil.copyfile(src, ROOT / "corpus" / "case_list" / src.name)
    write("case_list", "every_key.txt",
          "# comment\n\n name=a.b-c+d_1\tbatch=0 kv_len=0 seed=18446744073709551615 q_len=4 "
          "profile=boundary layout=ragged page_size=64 shuffle_pages=1 poison_unused=0 # tail\r\n"
          "batch=2 kv_len=5 seed=1\n")

    # manifests: the committed one, and a minimal one.
    shutil.copyfile(REPO / "data" / "golden" / "manifest.json",
                    ROOT / "corpus" / "manifest" / "small_golden.json")
    write("manifest", "minimal.json", json.dumps(
        {"schema": "mlacheck-manifest/1", "hash": "xxh3-64",
         "cases": [{"name": "x", "case": "name=x batch=1 kv_len=2 seed=3",
                    "tensors": {"q": "0123456789abcdef"}}]},
        indent=2) + "\n")


if __name__ == "__main__":
    main()
