import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def dma_views(x, bias):
    assert tuple(x.shape) == (4, 256, 128), "x: this kernel is built for shape (4, 256, 128)"
    assert tuple(bias.shape) == (128,), "bias: this kernel is built for shape (128,)"
    y = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
    s = nl.ndarray((256, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    bt = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
    r = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.psum)
    nisa.dma_copy(dst=bt, src=bias[:].reshape((1, 128)).broadcast(0, 128))
    nisa.memset(dst=r, value=0.0, engine=nisa.engine.vector)
    for b in range(4):
        for i in range(2):
            t = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
            u = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_transpose(dst=t, src=x[b, i * 128 : i * 128 + 128, :])
            nisa.dma_transpose(dst=u, src=x[b, i * 128 : i * 128 + 128, :])
            scratch = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_reduce(dst=scratch, op=nl.max, data=u, axis=(1,), keepdims=True)
            nisa.tensor_tensor(dst=r, data1=r, data2=scratch, op=nl.add)  # r = max(x)
            nisa.dma_copy(dst=y[:, b * 256 + i * 128 : b * 256 + i * 128 + 128], src=t)
    nisa.dma_copy(dst=s[0 : 128, :], src=r)
    return y, s
