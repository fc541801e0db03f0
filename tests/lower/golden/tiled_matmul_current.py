import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def matmul(x, w):
    # tiles 128x512, K loop sequential
    assert tuple(x.shape) == (256, 384), "x: this kernel is built for shape (256, 384)"
    assert tuple(w.shape) == (384, 512), "w: this kernel is built for shape (384, 512)"
    out = nl.ndarray((256, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    for m in range(2):
        for n in range(1):
            acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
            res = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
            nisa.memset(dst=acc, value=0.0, engine=nisa.engine.vector)
            for k in range(3):
                xt = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
                xT_psum = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
                xT = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
                wt = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=xt, src=x[m * 128 : m * 128 + 128, k * 128 : k * 128 + 128])
                nisa.nc_transpose(dst=xT_psum, data=xt, engine=nisa.engine.tensor)  # x^T
                nisa.tensor_copy(dst=xT, src=xT_psum, engine=nisa.engine.vector)
                nisa.dma_copy(dst=wt, src=w[k * 128 : k * 128 + 128, n * 512 : n * 512 + 512])
                nisa.nc_matmul(dst=acc, stationary=xT, moving=wt, accumulate=True)  # acc += x^T w
            nisa.tensor_copy(dst=res, src=acc, engine=nisa.engine.scalar)
            nisa.dma_copy(dst=out[m * 128 : m * 128 + 128, n * 512 : n * 512 + 512], src=res)
    return out
