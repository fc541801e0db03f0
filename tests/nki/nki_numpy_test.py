"""Self-checks of the NumPy NKI (nki_numpy.py): writes round to the tile's dtype in both
dialects, bf16 and fp8 (e4m3) round to nearest even, bf16 keeps NaN; partial tiles: a legacy masked copy moves
only the masked-in elements and an access outside a tensor (an unmasked index, a slice past the
end) is a rule break. Exits 1 on a failed case."""
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
    # float8_e4m3: 3 fraction bits, normals from 2^-6, largest 448, past it an infinity (as the
    # interpreter's round_to(f8): ir/dtype.cpp).
    ("fp8 tie to even (down)", "float8_e4m3", 1 + 2.0 ** -4, 1.0),
    ("fp8 tie to even (up)", "float8_e4m3", 1 + 3 * 2.0 ** -4, 1 + 2.0 ** -2),
    ("fp8 subnormal step 2^-9", "float8_e4m3", 3 * 2.0 ** -10, 2.0 ** -8),
    ("fp8 largest stays", "float8_e4m3", 448.0, 448.0),
    ("fp8 past the largest", "float8_e4m3", 480.0, np.inf),
    ("fp8 negative", "float8_e4m3", -1.265625, -1.25),
]


def partial_tile_cases():
    """(what, failure or "") for the partial-tile forms of both dialects."""
    out = []
    hbm = nki_numpy.tile(np.arange(300.0).reshape(150, 2), "hbm")
    _, nl, nisa = nki_numpy.modules("legacy", 3)
    i_p, i_f = nl.arange(128)[:, None], nl.arange(2)[None, :]
    t = nl.ndarray((128, 2), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t[i_p, i_f], src=hbm[128 + i_p, i_f], mask=(128 + i_p < 150))
    ok = np.array_equal(np.asarray(t[:22]), np.asarray(hbm[128:150])) and np.isnan(np.asarray(t[22:])).all()
    out.append(("legacy masked load copies the 22 rows inside the tensor", "" if ok else f"got {np.asarray(t)}"))
    for what, call in [
        ("legacy load without a mask past the end", lambda: nisa.dma_copy(dst=t[i_p, i_f], src=hbm[128 + i_p, i_f])),
        ("legacy mask that lets one row too many through",
         lambda: nisa.dma_copy(dst=t[i_p, i_f], src=hbm[128 + i_p, i_f], mask=(128 + i_p < 151))),
    ]:
        try:
            call()
            out.append((what, "not rejected"))
        except nki_numpy.RuleError:
            out.append((what, ""))
    _, nl, nisa = nki_numpy.modules("current", 3)
    t = nl.ndarray((128, 2), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t[0:min(128, 150 - 128), :], src=hbm[128:min(150, 128 + 128), :])
    ok = np.array_equal(np.asarray(t[:22]), np.asarray(hbm[128:150]))
    out.append(("current min()-cut slices copy the 22 rows", "" if ok else "wrong rows"))
    try:
        nisa.dma_copy(dst=t, src=hbm[128:256, :])
        out.append(("current slice past the end", "not rejected"))
    except nki_numpy.RuleError:
        out.append(("current slice past the end", ""))
    return out


def main():
    bad = []
    partial = partial_tile_cases()
    bad += [f"{what}: {why}" for what, why in partial if why]
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
    total = len(CASES) * 2 + 1 + len(partial)
    print(f"{total - len(bad)} of {total} cases pass")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
