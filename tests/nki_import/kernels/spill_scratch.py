# An on-chip array over SBUF (45 tiles of [128, 1024] fp32 = 180 KiB per partition, 176 KiB usable
# on trn1) holding computed tiles: the importer spills it to an HBM scratch tensor, as the
# compiler does: each tile written is saved, each tile read is reloaded (spill bytes = both).
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def spill_scratch(x):
    T = x.shape[0] // 128
    out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    big = nl.ndarray((T, nl.par_dim(128), 1024), dtype=nl.float32, buffer=nl.sbuf)
    for t in nl.affine_range(T):
        xt = nl.load(x[t * 128:(t + 1) * 128, :])
        big[t] = nl.multiply(xt, 2.0)
    for t in nl.affine_range(T):
        for h in nl.affine_range(2):
            y = nl.add(big[t, :, h * 512:(h + 1) * 512], 1.0)
            nl.store(out[t * 128:(t + 1) * 128, h * 512:(h + 1) * 512], value=y)
    return out
