import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def matmul(x, w):
    # tiles 128x512, K loop sequential
    assert tuple(x.shape) == (256, 384), "x: this kernel is built for shape (256, 384)"
    assert tuple(w.shape) == (384, 512), "w: this kernel is built for shape (384, 512)"
    out = nl.ndarray((256, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    for m in nl.affine_range(2):
        for n in nl.affine_range(1):
            acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
            res = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
            acc[...] = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
            for k in nl.sequential_range(3):
                xt = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
                xT_psum = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
                xT = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
                wt = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=xt, src=x[m * 128 : m * 128 + 128, k * 128 : k * 128 + 128])
                xT_psum[...] = nisa.nc_transpose(xt, engine=nisa.tensor_engine)  # x^T
                xT[...] = nisa.tensor_copy(xT_psum, engine=nisa.vector_engine)
                nisa.dma_copy(dst=wt, src=w[k * 128 : k * 128 + 128, n * 512 : n * 512 + 512])
                acc[...] += nisa.nc_matmul(xT, wt)  # acc += x^T w
            res[...] = nisa.tensor_copy(acc, engine=nisa.scalar_engine)
            nisa.dma_copy(dst=out[m * 128 : m * 128 + 128, n * 512 : n * 512 + 512], src=res)
    return out
