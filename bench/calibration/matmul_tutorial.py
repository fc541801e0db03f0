# The four kernels of the NKI matrix-multiplication tutorial, written here in tilesweep's own
# words from the tutorial's description of their schedules (tile sizes, loop order, what is kept
# on chip); measured on trn1 at bf16 lhsT [8192, 4096] (K, M) @ rhs [8192, 8192] (K, N). The
# published latencies are in calibration.toml.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TM = 128   # stationary free size (gemm_stationary_fmax)
TK = 128   # contraction tile (pmax)
TN = 512   # moving free size (gemm_moving_fmax)


@nki.jit
def matmul_tiled(lhsT, rhs):
    # Every (m, n) output tile reloads both operands' K tiles inside the K loop.
    K, M = lhsT.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // TM):
        for n in nl.affine_range(N // TN):
            acc = nl.zeros((TM, TN), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TK):
                a = nl.load(lhsT[k * TK:(k + 1) * TK, m * TM:(m + 1) * TM])
                b = nl.load(rhs[k * TK:(k + 1) * TK, n * TN:(n + 1) * TN])
                acc += nl.matmul(a, b, transpose_x=True)
            res = nl.copy(acc, dtype=out.dtype)
            nl.store(out[m * TM:(m + 1) * TM, n * TN:(n + 1) * TN], value=res)
    return out


@nki.jit
def matmul_hoisted(lhsT, rhs):
    # The stationary column strip is loaded once per m, the moving strip once per (m, n).
    K, M = lhsT.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // TM):
        a_all = nl.ndarray((K // TK, nl.par_dim(TK), TM), dtype=lhsT.dtype, buffer=nl.sbuf)
        for k in nl.affine_range(K // TK):
            a_all[k] = nl.load(lhsT[k * TK:(k + 1) * TK, m * TM:(m + 1) * TM])
        for n in nl.affine_range(N // TN):
            b_all = nl.ndarray((K // TK, nl.par_dim(TK), TN), dtype=rhs.dtype, buffer=nl.sbuf)
            for k in nl.affine_range(K // TK):
                b_all[k] = nl.load(rhs[k * TK:(k + 1) * TK, n * TN:(n + 1) * TN])
            acc = nl.zeros((TM, TN), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TK):
                acc += nl.matmul(a_all[k], b_all[k], transpose_x=True)
            res = nl.copy(acc, dtype=out.dtype)
            nl.store(out[m * TM:(m + 1) * TM, n * TN:(n + 1) * TN], value=res)
    return out


@nki.jit
def matmul_blocked_free(lhsT, rhs):
    # Blocks of 2 stationary tiles (256 rows of M) and 2 moving tiles (1024 columns of N): each
    # operand strip loaded once per block serves two output tiles.
    K, M = lhsT.shape
    _, N = rhs.shape
    BM = 2
    BN = 2
    out = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // (TM * BM)):
        a_all = nl.ndarray((BM, K // TK, nl.par_dim(TK), TM), dtype=lhsT.dtype, buffer=nl.sbuf)
        for bm in nl.affine_range(BM):
            for k in nl.affine_range(K // TK):
                a_all[bm, k] = nl.load(lhsT[k * TK:(k + 1) * TK, (m * BM + bm) * TM:(m * BM + bm + 1) * TM])
        for n in nl.affine_range(N // (TN * BN)):
            b_all = nl.ndarray((BN, K // TK, nl.par_dim(TK), TN), dtype=rhs.dtype, buffer=nl.sbuf)
            for bn in nl.affine_range(BN):
                for k in nl.affine_range(K // TK):
                    b_all[bn, k] = nl.load(rhs[k * TK:(k + 1) * TK, (n * BN + bn) * TN:(n * BN + bn + 1) * TN])
            for bm in nl.affine_range(BM):
                for bn in nl.affine_range(BN):
                    acc = nl.zeros((TM, TN), nl.float32, buffer=nl.psum)
                    for k in nl.affine_range(K // TK):
                        acc += nl.matmul(a_all[bm, k], b_all[bn, k], transpose_x=True)
                    res = nl.copy(acc, dtype=out.dtype)
                    nl.store(out[(m * BM + bm) * TM:(m * BM + bm + 1) * TM, (n * BN + bn) * TN:(n * BN + bn + 1) * TN],
                             value=res)
    return out


@nki.jit
def matmul_fully_optimized(lhsT, rhs):
    # Blocks in all three dims (16 x 128 rows of M, 2 x 512 columns of N, 8 x 128 of K): for each
    # N block, the output block lives in SBUF (in the operands' dtype, bf16, as the tutorial keeps
    # it) across the whole K loop, each K block of the moving operand is loaded once and reused by
    # every M block, partial products of 8 K tiles accumulate in PSUM and are added into the SBUF
    # result; the result is stored after the K loop.
    K, M = lhsT.shape
    _, N = rhs.shape
    BM = 16
    BN = 2
    BK = 8
    NM = M // (TM * BM)
    NN = N // (TN * BN)
    NK = K // (TK * BK)
    out = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for n in nl.affine_range(NN):
        res_all = nl.zeros((NM, BM, BN, nl.par_dim(TM), TN), dtype=lhsT.dtype, buffer=nl.sbuf)
        for k in nl.sequential_range(NK):
            b_blk = nl.ndarray((BK, nl.par_dim(TK), TN * BN), dtype=rhs.dtype, buffer=nl.sbuf)
            for bk in nl.affine_range(BK):
                b_blk[bk] = nl.load(rhs[(k * BK + bk) * TK:(k * BK + bk + 1) * TK, n * TN * BN:(n + 1) * TN * BN])
            for m in nl.affine_range(NM):
                a_blk = nl.ndarray((BK, nl.par_dim(TK), TM * BM), dtype=lhsT.dtype, buffer=nl.sbuf)
                for bk in nl.affine_range(BK):
                    a_blk[bk] = nl.load(lhsT[(k * BK + bk) * TK:(k * BK + bk + 1) * TK, m * TM * BM:(m + 1) * TM * BM])
                for bn in nl.affine_range(BN):
                    for bm in nl.affine_range(BM):
                        part = nl.zeros((TM, TN), nl.float32, buffer=nl.psum)
                        for bk in nl.affine_range(BK):
                            part += nl.matmul(a_blk[bk, :, bm * TM:(bm + 1) * TM], b_blk[bk, :, bn * TN:(bn + 1) * TN],
                                              transpose_x=True)
                        res_all[m, bm, bn] += part
        for m in nl.affine_range(NM):
            for bm in nl.affine_range(BM):
                packed = nl.ndarray((TM, TN * BN), dtype=out.dtype, buffer=nl.sbuf)
                for bn in nl.affine_range(BN):
                    packed[:, bn * TN:(bn + 1) * TN] = nl.copy(res_all[m, bm, bn], dtype=out.dtype)
                nl.store(out[(m * BM + bm) * TM:(m * BM + bm + 1) * TM, n * TN * BN:(n + 1) * TN * BN], value=packed)
    return out
