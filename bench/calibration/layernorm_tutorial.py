# The two kernels of the NKI LayerNorm tutorial, in tilesweep's own words: rows in 128-row
# tiles (the last masked), the whole 1000-column row in one tile. v1 uses the nl.* functions
# (mean, subtract, square, mean, rsqrt, multiply, gamma and beta); v2 computes the statistics with
# fewer, fused instructions (the tutorial uses bn_stats / bn_aggr, which tilesweep's ISA lacks:
# modelled as one reduction pass for the mean and one activation_reduce(square) pass for the
# variance) and normalises with per-partition tensor_scalar instructions.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def layernorm_v1(x, gamma, beta, eps=1e-5):
    R, C = x.shape
    out = nl.ndarray((R, C), dtype=x.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    jf = nl.arange(C)[None, :]
    g = nl.load(gamma[ip * 0, jf])   # gamma [1, C] broadcast to the 128 partitions by the DMA
    b = nl.load(beta[ip * 0, jf])
    for t in nl.affine_range((R + 127) // 128):
        xt = nl.load(x[t * 128 + ip, jf], mask=(t * 128 + ip < R))
        mean = nl.mean(xt, axis=1, keepdims=True)
        xc = nl.subtract(xt, mean)
        var = nl.mean(nl.square(xc), axis=1, keepdims=True)
        rstd = nl.rsqrt(var + eps)
        y = nl.multiply(xc, rstd)
        y = nl.multiply(y, g)
        y = nl.add(y, b)
        nl.store(out[t * 128 + ip, jf], value=y, mask=(t * 128 + ip < R))
    return out


@nki.jit
def layernorm_v2(x, gamma, beta, eps=1e-5):
    R, C = x.shape
    out = nl.ndarray((R, C), dtype=x.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    jf = nl.arange(C)[None, :]
    g = nl.load(gamma[ip * 0, jf])
    b = nl.load(beta[ip * 0, jf])
    for t in nl.affine_range((R + 127) // 128):
        xt = nl.load(x[t * 128 + ip, jf], mask=(t * 128 + ip < R))
        s = nisa.tensor_reduce(op=nl.add, data=xt, axis=(1,), keepdims=True)
        mean = nisa.tensor_scalar(data=s, op0=nl.multiply, operand0=1.0 / C)
        xc = nisa.tensor_scalar(data=xt, op0=nl.subtract, operand0=mean)
        sq = nl.ndarray((nl.par_dim(128), 1), dtype=nl.float32, buffer=nl.sbuf)
        junk = nisa.activation(op=nl.square, data=xc, reduce_op=nl.add, reduce_res=sq)
        var = nisa.tensor_scalar(data=sq, op0=nl.multiply, operand0=1.0 / C, op1=nl.add, operand1=eps)
        rstd = nisa.activation(op=nl.rsqrt, data=var)
        y = nisa.tensor_scalar(data=xc, op0=nl.multiply, operand0=rstd)
        y = nisa.tensor_tensor(data1=y, data2=g, op=nl.multiply)
        y = nisa.tensor_tensor(data1=y, data2=b, op=nl.add)
        nl.store(out[t * 128 + ip, jf], value=y, mask=(t * 128 + ip < R))
    return out
