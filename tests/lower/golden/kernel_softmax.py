import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def softmax(x):
    # v0 fused engines=default bufs=1 | max@2: tensor_reduce(x, op='max') | sub@2: tensor_scalar(x, y, op0='sub', op1='add', operand1=0) | exp@2: activation(x, broadcast_to(0, shape=(P, 1)), func='exp', scale=1) | sum@3: activation_reduce(x, broadcast_to(0, shape=(P, 1)), func='copy', scale=1) | div@3: tensor_scalar_act(x, activation_scale_tile(y, broadcast_to(0, shape=(P, 1)), y, func='reciprocal'), op0='mul', op1='add', operand1=0) | g0: pt=128 block=1 free=0
    assert tuple(x.shape) == (256, 512), "x: this kernel is built for shape (256, 512)"
    div5 = nl.ndarray((256, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    c6 = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=c6, value=0.0, engine=nisa.engine.vector)  # constant 0
    for r in range(2):
        x2 = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        v3 = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        v4 = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        e5 = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        t7 = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=x2, src=x[r * 128 : r * 128 + 128, :])  # load x
        nisa.tensor_reduce(dst=v3, op=nl.max, data=x2, axis=(1,), keepdims=True)  # max
        nisa.tensor_scalar(dst=v4, data=x2, op0=nl.subtract, operand0=v3, op1=None, operand1=None, engine=nisa.engine.vector)  # sub
        nisa.activation_reduce(dst=e5, op=nl.exp, data=v4, reduce_op=nl.add, reduce_res=v3, bias=c6, scale=1.0)  # e = exp; sum (fused)
        nisa.activation(dst=t7, op=nl.reciprocal, data=v3, bias=v3, scale=c6)
        nisa.tensor_scalar(dst=v4, data=e5, op0=nl.multiply, operand0=t7, op1=None, operand1=None, engine=nisa.engine.scalar)  # div
        nisa.dma_copy(dst=div5[r * 128 : r * 128 + 128, :], src=v4)  # store div5
    return div5
