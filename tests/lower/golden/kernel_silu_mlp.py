import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def silu_mlp(x, w1, w3, w2):
    # v0 fused engines=default bufs=1 | matmul@2: nc_matmul(nc_transpose_pe(x), y) | silu@2: activation(x, broadcast_to(0, shape=(P, 1)), func='silu', scale=1) | matmul@2: nc_matmul(nc_transpose_pe(x), y) | mul@2: scalar_tensor_tensor(x, broadcast_to(0, shape=(P, 1)), y, op0='add', op1='mul') | matmul@2: nc_matmul(nc_transpose_pe(x), y) | g0: pt=128 block=1 free=128
    matmul8 = nl.ndarray((256, 256), dtype=nl.float32, buffer=nl.shared_hbm)
    c12 = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    c12[...] = nisa.memset(shape=(128, 1), value=0.0, dtype=nl.float32, engine=nisa.vector_engine)  # constant 0
    for r in nl.affine_range(2):
        mm10 = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.sbuf)
        v11 = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.sbuf)
        mm18 = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.sbuf)
        v19 = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.sbuf)
        for n in nl.affine_range(2):
            acc7 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
            acc7[...] = nl.zeros((128, 128), dtype=nl.float32, buffer=nl.psum)
            for k in nl.sequential_range(2):
                w15 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
                x6 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
                t8 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
                s9 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=w15, src=w1[k * 128 : k * 128 + 128, n * 128 : n * 128 + 128])  # load w1
                nisa.dma_copy(dst=x6, src=x[r * 128 : r * 128 + 128, k * 128 : k * 128 + 128])  # load x
                t8[...] = nisa.nc_transpose(x6, engine=nisa.tensor_engine)
                s9[...] = nisa.tensor_copy(t8, engine=nisa.vector_engine)  # to SBUF
                acc7[...] += nisa.nc_matmul(s9, w15)  # matmul
            mm10[:, n * 128 : n * 128 + 128] = nisa.tensor_copy(acc7, engine=nisa.vector_engine)  # evacuate matmul
        v11[...] = nisa.activation(op=nl.silu, data=mm10, bias=c12, scale=1.0)  # silu
        for n_1 in nl.affine_range(2):
            acc15 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
            acc15[...] = nl.zeros((128, 128), dtype=nl.float32, buffer=nl.psum)
            for k_1 in nl.sequential_range(2):
                w313 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
                x14 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
                t16 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
                s17 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=w313, src=w3[k_1 * 128 : k_1 * 128 + 128, n_1 * 128 : n_1 * 128 + 128])  # load w3
                nisa.dma_copy(dst=x14, src=x[r * 128 : r * 128 + 128, k_1 * 128 : k_1 * 128 + 128])  # load x
                t16[...] = nisa.nc_transpose(x14, engine=nisa.tensor_engine)
                s17[...] = nisa.tensor_copy(t16, engine=nisa.vector_engine)  # to SBUF
                acc15[...] += nisa.nc_matmul(s17, w313)  # matmul
            mm18[:, n_1 * 128 : n_1 * 128 + 128] = nisa.tensor_copy(acc15, engine=nisa.vector_engine)  # evacuate matmul
        v19[...] = nisa.scalar_tensor_tensor(data=v11, op0=nl.add, operand0=c12, op1=nl.multiply, operand1=mm18)  # mul
        for n_2 in nl.affine_range(2):
            acc21 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
            o24 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
            acc21[...] = nl.zeros((128, 128), dtype=nl.float32, buffer=nl.psum)
            for k_2 in nl.sequential_range(2):
                w220 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
                t22 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
                s23 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=w220, src=w2[k_2 * 128 : k_2 * 128 + 128, n_2 * 128 : n_2 * 128 + 128])  # load w2
                t22[...] = nisa.nc_transpose(v19[:, k_2 * 128 : k_2 * 128 + 128], engine=nisa.tensor_engine)
                s23[...] = nisa.tensor_copy(t22, engine=nisa.vector_engine)  # to SBUF
                acc21[...] += nisa.nc_matmul(s23, w220)  # matmul
            o24[...] = nisa.tensor_copy(acc21, engine=nisa.vector_engine)  # evacuate matmul
            nisa.dma_copy(dst=matmul8[r * 128 : r * 128 + 128, n_2 * 128 : n_2 * 128 + 128], src=o24)  # store matmul8
    return matmul8
