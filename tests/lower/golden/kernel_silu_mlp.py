import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def silu_mlp(x, w1, w3, w2):
    # v0 fused transposed engines=default bufs=1 | matmul@2: nc_matmul(y, nc_transpose_pe(x)) | silu@2: activation(x, broadcast_to(0, shape=(P, 1)), func='silu', scale=1) | matmul@2: nc_matmul(y, nc_transpose_pe(x)) | mul@2: scalar_tensor_tensor(x, broadcast_to(0, shape=(P, 1)), y, op0='add', op1='mul') | matmul@2: nc_matmul(x, y) | g0: pt=128 block=1 free=128
    matmul8 = nl.ndarray((256, 256), dtype=nl.float32, buffer=nl.shared_hbm)
    c12 = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    c12[...] = nisa.memset(shape=(128, 1), value=0.0, dtype=nl.float32, engine=nisa.vector_engine)  # constant 0
    for r in nl.affine_range(2):
        xT5 = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.sbuf)
        vT16 = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.sbuf)
        for k in nl.affine_range(2):
            x6 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
            t7 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
            nisa.dma_copy(dst=x6, src=x[r * 128 : r * 128 + 128, k * 128 : k * 128 + 128])  # load x
            t7[...] = nisa.nc_transpose(x6, engine=nisa.tensor_engine)  # matmul
            xT5[:, k * 128 : k * 128 + 128] = nisa.tensor_copy(t7, engine=nisa.vector_engine)  # copy matmul
        for n in nl.affine_range(2):
            vT8 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
            acc10 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
            vT11 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
            vT13 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
            acc15 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
            acc10[...] = nl.zeros((128, 128), dtype=nl.float32, buffer=nl.psum)
            for k_1 in nl.sequential_range(2):
                w19 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=w19, src=w1[k_1 * 128 : k_1 * 128 + 128, n * 128 : n * 128 + 128])  # load w1
                acc10[:, 0 : 128] += nisa.nc_matmul(w19, xT5[:, k_1 * 128 : k_1 * 128 + 128])  # matmul
            vT8[...] = nisa.tensor_copy(acc10, engine=nisa.vector_engine)  # evacuate matmul (transposed)
            vT11[...] = nisa.activation(op=nl.silu, data=vT8, bias=c12, scale=1.0)  # silu
            acc15[...] = nl.zeros((128, 128), dtype=nl.float32, buffer=nl.psum)
            for k_2 in nl.sequential_range(2):
                w314 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=w314, src=w3[k_2 * 128 : k_2 * 128 + 128, n * 128 : n * 128 + 128])  # load w3
                acc15[:, 0 : 128] += nisa.nc_matmul(w314, xT5[:, k_2 * 128 : k_2 * 128 + 128])  # matmul
            vT13[...] = nisa.tensor_copy(acc15, engine=nisa.vector_engine)  # evacuate matmul (transposed)
            vT16[:, n * 128 : n * 128 + 128] = nisa.scalar_tensor_tensor(data=vT11, op0=nl.add, operand0=c12, op1=nl.multiply, operand1=vT13)  # mul
        for n_1 in nl.affine_range(2):
            acc18 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
            o19 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
            acc18[...] = nl.zeros((128, 128), dtype=nl.float32, buffer=nl.psum)
            for k_3 in nl.sequential_range(2):
                w217 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=w217, src=w2[k_3 * 128 : k_3 * 128 + 128, n_1 * 128 : n_1 * 128 + 128])  # load w2
                acc18[...] += nisa.nc_matmul(vT16[:, k_3 * 128 : k_3 * 128 + 128], w217)  # matmul
            o19[...] = nisa.tensor_copy(acc18, engine=nisa.vector_engine)  # evacuate matmul
            nisa.dma_copy(dst=matmul8[r * 128 : r * 128 + 128, n_1 * 128 : n_1 * 128 + 128], src=o19)  # store matmul8
    return matmul8
