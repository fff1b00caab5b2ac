#!/usr/bin/env python3
"""scripts/sass-loops.py on a made-up `cuobjdump -sass` listing: the loops found from backward branches
(nested ones too), their instruction and product counts, --products and --kernel filters, the opcode
histogram (predicates and modifiers dropped), and exit 2 on a file with no SASS function.

usage: check_sass_loops.py SCRIPT WORK_DIR
"""
import os
import subprocess
import sys

LISTING = """
	code for sm_90a
		Function : _Z6kernelPf
	.headerflags	@"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                       /* 0x00000a00ff017b82 */
                                                                                /* 0x000fe20000000800 */
        /*0010*/                   FADD R2, R2, R3 ;                            /* 0x0000000302027221 */
                                                                                /* 0x000fe20000000000 */
        /*0020*/                   QGMMA.64x16x32.F32.E4M3.E4M3 R24, R100, gdesc[UR8], RZ, !UPT ;
        /*0030*/                   FADD.FTZ R2, R2, R4 ;
        /*0040*/              @!P0 BRA 0x20 ;
        /*0050*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
        /*0060*/                   FMUL R5, R5, R6 ;
        /*0070*/                   BRA 0x10 ;
        /*0080*/                   BRA 0x90 ;
        /*0090*/                   EXIT ;
		Function : _Z5otherv
        /*0000*/                   HMMA.16816.F32.BF16 R4, R8, R12, R4 ;
        /*0010*/                   BRA 0x0 ;
"""


def run(script, *args):
    return subprocess.run([sys.executable, script, *args], capture_output=True, text=True)


def main() -> int:
    script, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    listing = os.path.join(work, "a.sass")
    with open(listing, "w") as f:
        f.write(LISTING)

    r = run(script, listing)
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    assert out == ["_Z6kernelPf: 10 instructions",
                   "  loop 0x20-0x40: 3 instructions, 1 products",
                   "  loop 0x10-0x70: 7 instructions, 1 products",
                   "_Z5otherv: 2 instructions",
                   "  loop 0x0-0x10: 2 instructions, 1 products"], out

    r = run(script, listing, "--kernel", "kernel", "--products", "1", "--histogram")
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    assert out[0] == "_Z6kernelPf: 10 instructions", out
    assert out[1] == "  loop 0x20-0x40: 3 instructions, 1 products", out
    assert out[2] == "    QGMMA 1, FADD 1, BRA 1", out  # FADD.FTZ as FADD, @!P0 BRA as BRA
    assert out[4] == "    FADD 2, BRA 2, QGMMA 1, WARPGROUP 1, FMUL 1", out
    assert len(out) == 5, out  # the other kernel left out

    r = run(script, listing, "--products", "0")
    assert r.returncode == 0 and "loop" not in r.stdout, r.stdout  # no loop without products

    empty = os.path.join(work, "empty.sass")
    with open(empty, "w") as f:
        f.write("Fatbin ptx code:\n")
    r = run(script, empty)
    assert r.returncode == 2 and "no SASS function" in r.stderr, (r.returncode, r.stderr)
    r = run(script, os.path.join(work, "missing.sass"))
    assert r.returncode == 2 and "cannot read" in r.stderr, (r.returncode, r.stderr)
    print("sass-loops: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
