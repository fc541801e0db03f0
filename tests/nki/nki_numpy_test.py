"""Self-checks of the NumPy NKI (nki_numpy.py): writes round to the tile's dtype in both
dialects, bf16 rounds to nearest even and keeps NaN. Exits 1 on a failed case."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nki_numpy  # noqa: E402

TIE_ODD = 1 + 3 * 2.0 ** -8  # between 1 + 2^-7 (odd) and 1 + 2^-6 (even): a tie, goes to 1 + 2^-6
CASES = [
    # (what, dtype, value written, value stored)
    ("bf16 tie to even (up)", "bfloat16", TIE_ODD, 1 + 2.0 ** -6),
    ("bf16 tie to even (down)", "bfloat16", 1 + 2.0 ** -8, 1.0),
    ("bf16 above the tie", "bfloat16", 1 + 2.0 ** -8 + 2.0 ** -16, 1 + 2.0 ** -7),
    ("fp32 keeps what bf16 drops", "float32", 1 + 2.0 ** -8, 1 + 2.0 ** -8),
    ("fp32 rounds", "float32", 1 + 2.0 ** -30, 1.0),
]


def main():
    bad = []
    for what, dtype, value, want in CASES:
        t = nki_numpy.tile(np.zeros((1, 1)), "sbuf", dtype)
        t[...] = np.full((1, 1), value)  # the legacy API's `t[...] = nisa.call(...)`
        if float(t[0, 0]) != want:
            bad.append(f"{what}: legacy assignment stored {float(t[0, 0])!r}, want {want!r}")
        t2 = nki_numpy.tile(np.zeros((1, 1)), "sbuf", dtype)
        nki_numpy.write(t2, np.full((1, 1), value))  # a current-API dst= write
        if float(t2[0, 0]) != want:
            bad.append(f"{what}: dst= write stored {float(t2[0, 0])!r}, want {want!r}")
    with np.errstate(invalid="ignore"):
        nan = np.array([np.uint32(0x7F800001)]).view(np.float32).astype(np.float64)
    if not np.isnan(nki_numpy.round_to(nan, "bfloat16")[0]):
        bad.append("a NaN with a low payload rounded to inf in bf16")
    for b in bad:
        print(b)
    print(f"{len(CASES) * 2 + 1 - len(bad)} of {len(CASES) * 2 + 1} cases pass")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
