# The Mamba scan (the NKI tutorial's v2 schedule, small): exp(delta * A) with the scale one value
# per partition (activation_scale_tile), partition broadcasts of B and C on the Tensor engine
# (`t.broadcast_to`), and tensor_tensor_scan. delta / u [C, S], a [C, N], b / c [N, S].
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def mamba_small(delta, u, a, b, c):
    CH, S = delta.shape
    NS = a.shape[1]
    out = nl.ndarray((CH, S), dtype=nl.float32, buffer=nl.shared_hbm)
    for t in nl.affine_range(CH // 128):
        acc = nl.zeros((nl.par_dim(128), S), dtype=nl.float32, buffer=nl.sbuf)
        d = nl.load(delta[t * 128:(t + 1) * 128, :])
        uu = nl.load(u[t * 128:(t + 1) * 128, :])
        for st in nl.affine_range(NS):
            a_i = nl.load(a[t * 128:(t + 1) * 128, st:st + 1])
            dA = nisa.activation(op=nl.exp, data=d, scale=a_i)
            b_i = nl.load(b[st:st + 1, :])
            dBu = nisa.tensor_tensor(nisa.tensor_tensor(d, uu, op=nl.multiply),
                                     b_i.broadcast_to((128, S)), op=nl.multiply)
            scan = nisa.tensor_tensor_scan(dA, dBu, initial=0, op0=nl.multiply, op1=nl.add)
            c_i = nl.load(c[st:st + 1, :])
            acc[...] = nl.add(acc, nisa.tensor_tensor(scan, c_i.broadcast_to((128, S)), op=nl.multiply))
        nl.store(out[t * 128:(t + 1) * 128, :], value=acc)
    return out
