import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def scalar_param(x, eps=1e-06):
    assert tuple(x.shape) == (128, 64), "x: this kernel is built for shape (128, 64)"
    y = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    xt = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
    et = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    yt = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=xt, src=x[:, :])
    et[...] = nisa.memset(shape=(128, 1), value=eps, dtype=nl.float32)  # load eps
    yt[...] = nisa.tensor_scalar(xt, nl.add, et, op1=None, operand1=None, engine=nisa.vector_engine)  # y = x + eps
    nisa.dma_copy(dst=y[:, :], src=yt)
    return y
