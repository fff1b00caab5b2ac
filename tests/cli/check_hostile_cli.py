#!/usr/bin/env python3
"""Hostile input to the binary gets a clear error (exit 2) with nothing written and nothing lost
(issue 11, items 5-9). Each check names the item; each failed before its fix:

 5  FIFOs and devices as inputs (ref blocked forever; /dev/zero as a case list read until memory
    ran out), oversized text inputs;
 6  memory estimated before allocating (batch=2147483647 allocated 8.4 GB before failing);
 7  case names that are paths or duplicates (wrote outside -o / overwrote with exit 0);
 9  page_size metadata that std::stoi half-parsed, empty / comment-only / directory case lists and
    a manifest without cases (exit 0 or 1), unbounded and raw control bytes in messages,
    --seed -1 / --worst -1 (wrapped), conflicting options (ignored), an output that is an input
    (`compare G O --json G` replaced the golden file), SIGINT during a write (left OUT.tmp).

usage: check_hostile_cli.py MLACHECK WORKDIR   (Python with safetensors + numpy)
"""
import hashlib
import json
import os
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

failures = 0


def check(cond, what):
    global failures
    print(("ok   " if cond else "FAIL ") + what)
    failures += 0 if cond else 1


def run(binary, *args, env=None, timeout=60):
    e = dict(os.environ)
    e.update(env or {})
    try:
        return subprocess.run([binary, *map(str, args)], capture_output=True, timeout=timeout, env=e)
    except subprocess.TimeoutExpired:
        return None


def refused(r, needle, what):
    """exit 2 with `needle` in stderr, in time."""
    if r is None:
        check(False, what + ": timed out (blocked?)")
        return
    err = r.stderr.decode(errors="replace")
    check(r.returncode == 2 and needle in err,
          "%s: exit %d, %r" % (what, r.returncode, err.strip().splitlines()[-1][:200] if err.strip() else ""))


def digest(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def rewrite_metadata(src, dst, **changes):
    """A copy of safetensors file src with __metadata__ entries replaced (bytes kept as they are)."""
    raw = Path(src).read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    header["__metadata__"].update(changes)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    Path(dst).write_bytes(struct.pack("<Q", len(text)) + text + raw[8 + n:])


def main():
    binary, work = sys.argv[1], Path(sys.argv[2])
    work.mkdir(parents=True, exist_ok=True)
    for p in work.iterdir():
        if p.is_file() or p.is_fifo():
            p.unlink()
    golden = work / "g.safetensors"
    r = run(binary, "gen", "--batch", 2, "--kv-len", 40, "--seed", 3, "-o", golden)
    check(r is not None and r.returncode == 0, "gen a small golden file")
    inputs = work / "in.safetensors"
    run(binary, "gen", "--batch", 2, "--kv-len", 40, "--seed", 3, "--inputs-only", "-o", inputs)

    # --- 5: FIFOs, devices, directories, size limits.
    fifo = work / "fifo"
    os.mkfifo(fifo)
    refused(run(binary, "ref", fifo, work / "o.safetensors", timeout=20), "not a regular file", "5 ref FIFO OUT")
    refused(run(binary, "compare", golden, fifo, "--recipe", "a16w16", timeout=20), "not a regular file", "5 compare G FIFO")
    refused(run(binary, "gen", "--case-list", fifo, "-o", work / "d", timeout=20), "not a regular file",
            "5 gen --case-list FIFO")
    refused(run(binary, "gen", "--case-list", "/dev/zero", "-o", work / "d", timeout=20), "not a regular file",
            "5 gen --case-list /dev/zero")
    refused(run(binary, "gen", "--check-manifest", "/dev/zero", timeout=20), "not a regular file",
            "5 gen --check-manifest /dev/zero")
    big = work / "big.txt"
    with open(big, "wb") as f:
        f.truncate(64 << 20)  # sparse: 64 MiB of NULs
    refused(run(binary, "gen", "--case-list", big, "-o", work / "d", timeout=20), "more than the",
            "5 a 64 MiB case list")
    refused(run(binary, "compare", golden, golden, "--recipe", "a16w16", "--tensor", "out_a16w16", "--schedule", "table=/dev/zero", timeout=20),
            "not a regular file", "5 --schedule table=/dev/zero")

    # --- 6: memory estimated before allocating.
    cl = work / "huge.txt"
    cl.write_text("name=huge batch=2147483647 kv_len=1 seed=1\n")
    t0 = time.time()
    r = run(binary, "gen", "--case-list", cl, "-o", work / "huge", timeout=60)
    refused(r, "GB available", "6 batch=2147483647 refused with the numbers")
    check(time.time() - t0 < 10, "6 ... before allocating (%.1f s)" % (time.time() - t0))
    low = {"MLACHECK_MEMORY_AVAILABLE": "1000000"}
    refused(run(binary, "ref", inputs, work / "r.safetensors", env=low), "needs", "6 ref over the memory limit")
    check(not (work / "r.safetensors").exists(), "6 ... wrote nothing")
    refused(run(binary, "compare", golden, golden, "--recipe", "a16w16", "--tensor", "out_a16w16", env=low), "needs",
            "6 compare over the memory limit")
    refused(run(binary, "gen", "--batch", 4, "--kv-len", 1024, "--seed", 1, "-o", work / "m.safetensors", env=low),
            "needs", "6 gen over the memory limit")
    refused(run(binary, "gen", "--batch", 1, "--kv-len", 4, "--seed", 1, "-o", work / "m.safetensors",
                env={"MLACHECK_MEMORY_AVAILABLE": "lots"}), "not a byte count", "6 a bad MLACHECK_MEMORY_AVAILABLE")

    # --- 7: case names are file-name components, unique.
    outdir = work / "out7"
    for name in ("../../escaped", "/tmp/mlacheck_abs_escape", "a/b", ".."):
        cl.write_text("name=%s batch=1 kv_len=4 seed=1\n" % name)
        refused(run(binary, "gen", "--case-list", cl, "-o", outdir), "file-name component", "7 name=%s" % name)
    check(not (work.parent / "escaped.safetensors").exists() and not Path("/tmp/mlacheck_abs_escape.safetensors").exists(),
          "7 ... nothing written outside -o")
    cl.write_text("name=x batch=1 kv_len=4 seed=1\nname=x batch=1 kv_len=5 seed=2\n")
    refused(run(binary, "gen", "--case-list", cl, "-o", outdir), "already used on line 1", "7 duplicate names")

    # --- 9: one strict parser for page_size.
    for bad in ("16.5", "16abc", " 16", "+16", "0", ""):
        p = work / "ps.safetensors"
        rewrite_metadata(inputs, p, page_size=bad)
        refused(run(binary, "ref", p, work / "o.safetensors"), "page_size", "9 ref page_size %r" % bad)
    # Case lists and manifests that hold nothing.
    empty = work / "empty.txt"
    empty.write_text("")
    refused(run(binary, "gen", "--case-list", empty, "-o", work / "d"), "has no case", "9 empty case list")
    empty.write_text("# nothing\n\n   # here\n")
    refused(run(binary, "gen", "--case-list", empty, "-o", work / "d"), "has no case", "9 comment-only case list")
    refused(run(binary, "gen", "--case-list", work, "-o", work / "d"), "not a regular file", "9 a directory as case list")
    m = work / "m.json"
    m.write_text(json.dumps({"schema": "mlacheck-manifest/1", "hash": "xxh3-64", "cases": []}))
    refused(run(binary, "gen", "--check-manifest", m), "has no case", "9 a manifest with no case")
    # Messages: control bytes escaped, a NUL does not cut them, and their length is capped.
    cl.write_bytes(b"batch=1 kv_len=4 seed=1 \x1b[2J\x00tail=1\n")
    r = run(binary, "gen", "--case-list", cl, "-o", work / "d")
    refused(r, "\\x1b[2J\\x00tail", "9 control bytes and NUL escaped in the message")
    check(r is not None and b"\x1b" not in r.stderr and b"\x00" not in r.stderr, "9 ... no raw control byte on stderr")
    key = "k" * (8 << 20)
    hdr = json.dumps({"__metadata__": {key: "v"}}).encode() + b" bad"
    hostile = work / "long.safetensors"
    hostile.write_bytes(struct.pack("<Q", len(hdr)) + hdr)
    r = run(binary, "ref", hostile, work / "o.safetensors")
    refused(r, "error", "9 an 8 MB header that is not valid")
    check(r is not None and len(r.stderr) < 10000, "9 ... message capped (%d bytes)" % (len(r.stderr) if r else -1))
    for what, raw in (("byte-order mark", b"\xef\xbb\xbf{}"), ("NUL", b"{}\x00{\"x\": 1}")):
        p = work / "h.safetensors"
        text = raw + b" " * (-len(raw) % 8)
        p.write_bytes(struct.pack("<Q", len(text)) + text)
        refused(run(binary, "ref", p, work / "o.safetensors"), what, "9 a header with a %s" % what)
    # Unsigned options refuse negative numbers instead of wrapping.
    refused(run(binary, "gen", "--batch", 1, "--kv-len", 4, "--seed", -1, "-o", work / "s.safetensors"),
            "not an unsigned", "9 --seed -1")
    refused(run(binary, "compare", golden, golden, "--recipe", "a16w16", "--tensor", "out_a16w16", "--worst", -1), "not an unsigned",
            "9 --worst -1")
    # Conflicting options are refused.
    refused(run(binary, "gen", "--check-manifest", m, "-o", work / "x"), "excludes", "9 --check-manifest with -o")
    # --stamps asks for a build the gate never uses (gpu/stamps.h): refused before anything runs,
    # with the way to get one; a stamps build says so in its version and gets as far as the GPU.
    version = run(binary, "--version").stdout.decode()
    if "hopper kernel stamps" in version:
        r = run(binary, "bench", "--stamps", "--strategy", "a16w16/split-k/hopper", "--case", "bs4_kv1024", "--reps", 1)
        check(r is not None and r.returncode == 0, "9 bench --stamps in a stamps build runs (or says no GPU)")
    else:
        refused(run(binary, "bench", "--stamps"), "-DMLACHECK_HOPPER_STAMPS=ON", "9 bench --stamps without the stamps build")
    refused(run(binary, "gen", "--batch", 1, "--kv-len", 4, "--seed", 1, "--inputs-only", "--recipes", "a16w16",
                "-o", work / "x.safetensors"), "excludes", "9 --inputs-only with --recipes")
    # An output that is an input.
    before = digest(golden)
    refused(run(binary, "compare", golden, golden, "--recipe", "a16w16", "--tensor", "out_a16w16", "--json", golden),
            "would destroy the input", "9 compare G O --json G")
    refused(run(binary, "compare", golden, golden, "--recipe", "a16w16", "--tensor", "out_a16w16", "--json", "%s/./%s" % (work, golden.name)),
            "would destroy the input", "9 ... also spelled another way")
    refused(run(binary, "ref", inputs, inputs), "would destroy the input", "9 ref IN IN")
    check(digest(golden) == before, "9 ... the golden file is unchanged")

    # SIGINT while a file is being written: no temporary is left behind.
    target = work / "sig.safetensors"
    proc = subprocess.Popen([binary, "gen", "--batch", "8", "--kv-len", "8192", "--seed", "1", "-o", str(target)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline, saw_tmp = time.time() + 120, False
    while time.time() < deadline and proc.poll() is None:
        if any(p.name.startswith("sig.safetensors.tmp.") for p in work.iterdir()):
            saw_tmp = True
            proc.send_signal(signal.SIGINT)
            break
        time.sleep(0.002)
    proc.wait(timeout=120)
    left = [p.name for p in work.iterdir() if p.name.startswith("sig.safetensors.tmp.")]
    if saw_tmp:
        check(proc.returncode == -signal.SIGINT, "9 SIGINT during the write ends the process (%d)" % proc.returncode)
        check(left == [], "9 ... and removes the temporary (%s)" % left)
    else:
        print("note: the write finished before the temporary was seen; SIGINT check not exercised")
        check(left == [], "9 no temporary left")

    print("%d failure(s)" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
