import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def rmsnorm_matmul(x, w, eps):
    # v0 fused engines=default bufs=1 | square@2: activation(x, broadcast_to(0, shape=(P, 1)), func='square', scale=1) | mean@2: tensor_scalar_reduce(x, broadcast_to(F, shape=(P, 1)), op0='div', reduce_op='add') | add@2: scalar_tensor_tensor(broadcast_to(0, shape=(P, 1)), x, y, op0='add', op1='add') | rsqrt@2: activation(broadcast_to(0, shape=(P, 1)), x, func='rsqrt', scale=1) | mul@2: tensor_scalar_act(x, y, op0='mul', op1='add', operand1=0) | matmul@5: nc_matmul(nc_transpose_pe(x), y) | g0: pt=128 block=1 free=128
    matmul8 = nl.ndarray((256, 256), dtype=nl.float32, buffer=nl.shared_hbm)
    c6 = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    c8 = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    c8[...] = nisa.memset(shape=(128, 1), value=256.0, dtype=nl.float32, engine=nisa.vector_engine)  # constant 256
    c6[...] = nisa.memset(shape=(128, 1), value=0.0, dtype=nl.float32, engine=nisa.vector_engine)  # constant 0
    for r in nl.affine_range(2):
        x4 = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.sbuf)
        v5 = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.sbuf)
        v7 = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        eps9 = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        v10 = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        v11 = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        v12 = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=x4, src=x[r * 128 : r * 128 + 128, :])  # load x
        v5[...] = nisa.activation(op=nl.square, data=x4, bias=c6, scale=1.0)  # square
        nisa.tensor_scalar_reduce(data=v5, op0=nl.divide, operand0=c8, reduce_op=nl.add, reduce_res=v7)  # mean
        nisa.dma_copy(dst=eps9, src=eps.reshape((1, 1)).broadcast_to((128, 1)))  # load eps
        v10[...] = nisa.scalar_tensor_tensor(data=c6, op0=nl.add, operand0=v7, op1=nl.add, operand1=eps9)  # add
        v11[...] = nisa.activation(op=nl.rsqrt, data=c6, bias=v10, scale=1.0)  # rsqrt
        v12[...] = nisa.tensor_scalar(x4, nl.multiply, v11, op1=nl.add, operand1=0.0, engine=nisa.scalar_engine)  # mul
        for n in nl.affine_range(2):
            acc14 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
            o17 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
            acc14[...] = nl.zeros((128, 128), dtype=nl.float32, buffer=nl.psum)
            for k in nl.sequential_range(2):
                w13 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
                t15 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
                s16 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=w13, src=w[k * 128 : k * 128 + 128, n * 128 : n * 128 + 128])  # load w
                t15[...] = nisa.nc_transpose(v12[:, k * 128 : k * 128 + 128], engine=nisa.tensor_engine)
                s16[...] = nisa.tensor_copy(t15, engine=nisa.vector_engine)  # to SBUF
                acc14[...] += nisa.nc_matmul(s16, w13)  # matmul
            o17[...] = nisa.tensor_copy(acc14, engine=nisa.vector_engine)  # evacuate matmul
            nisa.dma_copy(dst=matmul8[r * 128 : r * 128 + 128, n * 128 : n * 128 + 128], src=o17)  # store matmul8
    return matmul8
