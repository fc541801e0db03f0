import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def silu_mlp(x, w1, w3, w2):
    # v0 fused transposed engines=default bufs=1 | matmul@2: nc_matmul(y, nc_transpose_pe(x)) | silu@2: activation(x, broadcast_to(0, shape=(P, 1)), func='silu', scale=1) | matmul@2: nc_matmul(y, nc_transpose_pe(x)) | mul@2: scalar_tensor_tensor(x, broadcast_to(0, shape=(P, 1)), y, op0='add', op1='mul') | matmul@2: nc_matmul(x, y) | g0: pt=128 block=1 free=128 store=256 panel
    assert tuple(x.shape) == (256, 256), "x: this kernel is built for shape (256, 256)"
    assert tuple(w1.shape) == (256, 256), "w1: this kernel is built for shape (256, 256)"
    assert tuple(w3.shape) == (256, 256), "w3: this kernel is built for shape (256, 256)"
    assert tuple(w2.shape) == (256, 256), "w2: this kernel is built for shape (256, 256)"
    matmul8 = nl.ndarray((256, 256), dtype=nl.float32, buffer=nl.shared_hbm)
    c13 = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=c13, value=0.0, engine=nisa.engine.vector)  # constant 0
    for r in range(2):
        xT5 = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.sbuf)
        x6 = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.sbuf)
        w8 = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        w9 = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        vT16 = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.sbuf)
        o17 = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=x6, src=x[r * 128 : r * 128 + 128, :])  # load x
        for k in range(2):
            t7 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
            nisa.nc_transpose(dst=t7, data=x6[:, k * 128 : k * 128 + 128], engine=nisa.engine.tensor)  # matmul
            nisa.tensor_copy(dst=xT5[:, k * 128 : k * 128 + 128], src=t7, engine=nisa.engine.vector)  # copy matmul
        for k_1 in range(2):
            nisa.dma_copy(dst=w8[:, k_1 * 256 : k_1 * 256 + 256], src=w1[k_1 * 128 : k_1 * 128 + 128, :])  # load w1
        for k_2 in range(2):
            nisa.dma_copy(dst=w9[:, k_2 * 256 : k_2 * 256 + 256], src=w3[k_2 * 128 : k_2 * 128 + 128, :])  # load w3
        for n in range(2):
            vT10 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
            acc11 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
            vT12 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
            vT14 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
            acc15 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
            nisa.memset(dst=acc11, value=0.0, engine=nisa.engine.vector)
            for k_3 in range(2):
                nisa.nc_matmul(dst=acc11[:, 0 : 128], stationary=w8[:, k_3 * 256 + n * 128 : k_3 * 256 + n * 128 + 128], moving=xT5[:, k_3 * 128 : k_3 * 128 + 128], accumulate=True)  # matmul
            nisa.tensor_copy(dst=vT10, src=acc11, engine=nisa.engine.vector)  # evacuate matmul (transposed)
            nisa.activation(dst=vT12, op=nl.silu, data=vT10, bias=c13, scale=1.0)  # silu
            nisa.memset(dst=acc15, value=0.0, engine=nisa.engine.vector)
            for k_4 in range(2):
                nisa.nc_matmul(dst=acc15[:, 0 : 128], stationary=w9[:, k_4 * 256 + n * 128 : k_4 * 256 + n * 128 + 128], moving=xT5[:, k_4 * 128 : k_4 * 128 + 128], accumulate=True)  # matmul
            nisa.tensor_copy(dst=vT14, src=acc15, engine=nisa.engine.vector)  # evacuate matmul (transposed)
            nisa.scalar_tensor_tensor(dst=vT16[:, n * 128 : n * 128 + 128], data=vT12, op0=nl.add, operand0=c13, op1=nl.multiply, operand1=vT14)  # mul
        for n_1 in range(2):
            w18 = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.sbuf)
            acc19 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
            for k_5 in range(2):
                nisa.dma_copy(dst=w18[:, k_5 * 128 : k_5 * 128 + 128], src=w2[k_5 * 128 : k_5 * 128 + 128, n_1 * 128 : n_1 * 128 + 128])  # load w2
            nisa.memset(dst=acc19, value=0.0, engine=nisa.engine.vector)
            for k_6 in range(2):
                nisa.nc_matmul(dst=acc19, stationary=vT16[:, k_6 * 128 : k_6 * 128 + 128], moving=w18[:, k_6 * 128 : k_6 * 128 + 128], accumulate=True)  # matmul
            nisa.tensor_copy(dst=o17[:, n_1 * 128 : n_1 * 128 + 128], src=acc19, engine=nisa.engine.vector)  # evacuate matmul
        nisa.dma_copy(dst=matmul8[r * 128 : r * 128 + 128, :], src=o17)  # store matmul8
    return matmul8
