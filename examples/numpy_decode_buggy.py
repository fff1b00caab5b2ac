#!/usr/bin/env python3
"""numpy_decode.py with ONE planted bug, for seeing the gate reject a wrong kernel.

    python examples/numpy_decode_buggy.py GOLDEN OUTPUT

The bug is in the LSE merge only: every non-empty split gets weight 1 instead of
exp(partial_lse_s - max_s partial_lse), so the merged `out` is the plain mean of the split
outputs (and `lse` is M + log(number of non-empty splits)). The split partials are still right,
so `mlacheck drift` should find them matching and point at the merge.
"""
import numpy as np

import numpy_decode as nd  # the correct kernel, next to this file


def merge_equal_weights(partial_out, partial_lse):
    big = partial_lse.max(axis=-2)
    seen = np.isfinite(big)
    w = np.isfinite(partial_lse).astype(np.float32)  # BUG: should be exp(partial_lse - big)
    return nd.finish_merge(partial_out, w, big, seen)


if __name__ == "__main__":
    nd.main(merge_fn=merge_equal_weights)
