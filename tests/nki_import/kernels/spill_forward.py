# A spilled array (45 tiles of [128, 1024] fp32 = 180 KiB per partition, over trn1's 176 KiB)
# whose tiles are also read right after they are written, in the same loop body: that read
# takes the value from the save's staging tile (no reload); the second loop's reads reload.
# Spill bytes = saved once + reloaded once.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def spill_forward(x):
    T = x.shape[0] // 128
    out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    big = nl.ndarray((T, nl.par_dim(128), 1024), dtype=nl.float32, buffer=nl.sbuf)
    for t in nl.affine_range(T):
        xt = nl.load(x[t * 128:(t + 1) * 128, :])
        big[t] = nl.multiply(xt, 2.0)
        y = nl.add(big[t], 1.0)
        nl.store(out[t * 128:(t + 1) * 128, :], value=y)
    for t in nl.affine_range(T):
        y = nl.add(big[t], 1.0)
        nl.store(out[t * 128:(t + 1) * 128, :], value=y)
    return out
