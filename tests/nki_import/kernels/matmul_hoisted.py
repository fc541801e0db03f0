# Matmul with the stationary tiles of one row block loaded once into a larger on-chip array
# (a block dim in front of nl.par_dim), reused for every column block; the legacy nisa call.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa

@nki.jit
def matmul_hoisted(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    i_k = nl.arange(128)[:, None]
    i_m = nl.arange(128)[None, :]
    for m in nl.affine_range(M // 128):
        lhs_all = nl.ndarray((K // 128, nl.par_dim(128), 128), dtype=lhsT.dtype, buffer=nl.sbuf)
        for k in nl.affine_range(K // 128):
            lhs_all[k, i_k, i_m] = nl.load(lhsT[k * 128 + i_k, m * 128 + i_m])
        for n in nl.affine_range(N // 256):
            acc = nl.zeros((nl.par_dim(128), 256), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // 128):
                r = nl.load(rhs[k * 128:(k + 1) * 128, n * 256:(n + 1) * 256])
                acc += nisa.nc_matmul(lhs_all[k], r)
            res = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.sbuf)
            res[...] = nisa.tensor_copy(acc, engine=nisa.scalar_engine if False else nisa.vector_engine)
            nl.store(out[m * 128:(m + 1) * 128, n * 256:(n + 1) * 256], value=res)
    return out
