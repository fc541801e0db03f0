import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def rmsnorm_matmul(x, w, eps=1e-06):
    # v0 fused engines=default bufs=1 | square@2: activation(x, broadcast_to(0, shape=(P, 1)), func='square', scale=1) | mean@2: tensor_scalar_reduce(x, broadcast_to(reciprocal(F), shape=(P, 1)), op0='mul', reduce_op='add') | add@2: scalar_tensor_tensor(broadcast_to(0, shape=(P, 1)), x, y, op0='add', op1='add') | rsqrt@2: activation(broadcast_to(0, shape=(P, 1)), x, func='rsqrt', scale=1) | mul@2: activation_scale_tile(x, y, broadcast_to(0, shape=(P, 1)), func='copy') | matmul@5: nc_matmul(nc_transpose_pe(x), y) | g0: pt=128 block=1 free=128 store=256 hoist panel
    assert tuple(x.shape) == (256, 256), "x: this kernel is built for shape (256, 256)"
    assert tuple(w.shape) == (256, 256), "w: this kernel is built for shape (256, 256)"
    matmul8 = nl.ndarray((256, 256), dtype=nl.float32, buffer=nl.shared_hbm)
    c6 = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    c8 = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=c8, value=0.00390625, engine=nisa.engine.vector)  # constant 0.00390625
    nisa.memset(dst=c6, value=0.0, engine=nisa.engine.vector)  # constant 0
    for r in range(2):
        x4 = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.sbuf)
        v5 = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.sbuf)
        v7 = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        eps9 = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        v10 = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        xT11 = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.sbuf)
        o13 = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=x4, src=x[r * 128 : r * 128 + 128, :])  # load x
        nisa.activation(dst=v5, op=nl.square, data=x4, bias=c6, scale=1.0)  # square
        scratch = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar_reduce(dst=scratch, data=v5, op0=nl.multiply, operand0=c8, reduce_op=nl.add, reduce_res=v7)  # mean
        nisa.memset(dst=eps9, value=eps)  # load eps
        nisa.scalar_tensor_tensor(dst=v10, data=c6, op0=nl.add, operand0=v7, op1=nl.add, operand1=eps9)  # add
        nisa.activation(dst=v7, op=nl.rsqrt, data=c6, bias=v10, scale=1.0)  # rsqrt
        nisa.activation(dst=v5, op=nl.copy, data=x4, bias=c6, scale=v7)  # mul
        for k in range(2):
            t12 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
            nisa.nc_transpose(dst=t12, data=v5[:, k * 128 : k * 128 + 128], engine=nisa.engine.tensor)  # matmul
            nisa.tensor_copy(dst=xT11[:, k * 128 : k * 128 + 128], src=t12, engine=nisa.engine.vector)  # copy matmul
        for n in range(2):
            w14 = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.sbuf)
            acc15 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
            for k_1 in range(2):
                nisa.dma_copy(dst=w14[:, k_1 * 128 : k_1 * 128 + 128], src=w[k_1 * 128 : k_1 * 128 + 128, n * 128 : n * 128 + 128])  # load w
            nisa.memset(dst=acc15, value=0.0, engine=nisa.engine.vector)
            for k_2 in range(2):
                nisa.nc_matmul(dst=acc15, stationary=xT11[:, k_2 * 128 : k_2 * 128 + 128], moving=w14[:, k_2 * 128 : k_2 * 128 + 128], accumulate=True)  # matmul
            nisa.tensor_copy(dst=o13[:, n * 128 : n * 128 + 128], src=acc15, engine=nisa.engine.vector)  # evacuate matmul
        nisa.dma_copy(dst=matmul8[r * 128 : r * 128 + 128, :], src=o13)  # store matmul8
    return matmul8
