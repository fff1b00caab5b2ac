#!/usr/bin/env python3
"""A kernel's loops in `cuobjdump -sass` output: each loop's instructions, its tensor-core products, and
(with --histogram) the opcodes of the loop that holds a given count of products.

usage: scripts/sass-loops.py LISTING.sass [--kernel SUBSTRING] [--products N] [--histogram]

LISTING.sass is what `cuobjdump -sass OBJECT` prints (scripts/sass-tools.sh puts cuobjdump and nvdisasm
on this machine: no GPU needed to read the SASS of an sm_90a build). A loop is the range from a
backward branch's target to the branch. Prints, for each function whose name contains SUBSTRING (all
when omitted): its instruction count, then one line per loop (start, end, instructions, products:
QGMMA / HGMMA / HMMA / IMMA / MMA instructions); with --products N, only loops of exactly N products
(the hopper kernel's tile loop has 34 for a8w8: 18 of Q·Kᵀ, 16 of P·V); with --histogram, the opcode
counts (modifiers dropped, predicated instructions counted as their opcode) of each loop printed.
Static counts: a loop's skipped branches count too. Exit 2 when the file holds no SASS function.
"""
import argparse
import collections
import re
import signal
import sys

FUNCTION = re.compile(r"Function : (\S+)")
INSTRUCTION = re.compile(r"^\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
BRANCH_TARGET = re.compile(r"\bBRA\b[^;]*?(0x[0-9a-f]+)")
PRODUCT = re.compile(r"^(QGMMA|HGMMA|HMMA|IMMA|MMA|BGMMA|IGMMA)$")


def functions(lines):
    """{name: [(address, text)]} in listing order."""
    out = collections.OrderedDict()
    current = None
    for line in lines:
        m = FUNCTION.search(line)
        if m:
            current = m.group(1)
            out[current] = []
            continue
        if current is None:
            continue
        m = INSTRUCTION.match(line)
        if m:
            out[current].append((int(m.group(1), 16), m.group(2)))
    return out


def opcode(text):
    words = text.split()
    word = words[1] if words[0].startswith("@") and len(words) > 1 else words[0]
    return word.split(".")[0]


def loops(instructions):
    """(start, end, body) for each backward branch, in address order of the branch."""
    found = []
    for address, text in instructions:
        m = BRANCH_TARGET.search(text)
        if m and int(m.group(1), 16) <= address:
            start = int(m.group(1), 16)
            found.append((start, address, [t for a, t in instructions if start <= a <= address]))
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("listing")
    ap.add_argument("--kernel", default="")
    ap.add_argument("--products", type=int)
    ap.add_argument("--histogram", action="store_true")
    args = ap.parse_args()
    try:
        with open(args.listing, errors="replace") as f:
            funcs = functions(f)
    except OSError as e:
        print(f"sass-loops: cannot read {args.listing}: {e.strerror}", file=sys.stderr)
        return 2
    if not funcs:
        print(f"sass-loops: {args.listing} holds no SASS function (cuobjdump -sass output expected)", file=sys.stderr)
        return 2
    for name, instructions in funcs.items():
        if args.kernel not in name:
            continue
        print(f"{name}: {len(instructions)} instructions")
        for start, end, body in loops(instructions):
            products = sum(1 for t in body if PRODUCT.match(opcode(t)))
            if args.products is not None and products != args.products:
                continue
            print(f"  loop {start:#x}-{end:#x}: {len(body)} instructions, {products} products")
            if args.histogram:
                counts = collections.Counter(opcode(t) for t in body)
                print("    " + ", ".join(f"{op} {n}" for op, n in counts.most_common()))
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the listing quietly
    sys.exit(main())
