import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def dma_views(x, bias):
    assert tuple(x.shape) == (4, 256, 128), "x: this kernel is built for shape (4, 256, 128)"
    assert tuple(bias.shape) == (128,), "bias: this kernel is built for shape (128,)"
    y = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
    s = nl.ndarray((256, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    bt = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
    r = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.psum)
    nisa.dma_copy(dst=bt, src=bias[:].reshape((1, 128)).broadcast_to((128, 128)))
    r[...] = nl.zeros((128, 1), dtype=nl.float32, buffer=nl.psum)
    for b in nl.sequential_range(4):
        for i in nl.affine_range(2):
            t = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
            u = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
            t[...] = nisa.dma_transpose(x[b, i * 128 : i * 128 + 128, :])
            u[...] = nl.load_transpose2d(x[b, i * 128 : i * 128 + 128, :])
            r[...] += nisa.tensor_reduce(nl.max, u, axis=(1,), keepdims=True)  # r = max(x)
            nisa.dma_copy(dst=y[:, b * 256 + i * 128 : b * 256 + i * 128 + 128], src=t)
    nisa.dma_copy(dst=s[0 : 128, :], src=r)
    return y, s
