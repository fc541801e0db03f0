# Per row tile, two column halves each go Scalar -> Vector three times (out = x tanh(q),
# q = sigmoid(p) p, p = exp(x) x). halves_parallel
# runs them in an affine_range loop: the importer interleaves its two iterations (statement by
# statement), so Vector works on one half while Scalar works on the other. halves_sequential is
# the same computation in a sequential_range loop, which is never interleaved.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def halves_parallel(x):
    T = x.shape[0] // 128
    out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    for t in nl.affine_range(T):
        xt = nl.load(x[t * 128:(t + 1) * 128, :])
        o = nl.ndarray((nl.par_dim(128), 1024), dtype=nl.float32, buffer=nl.sbuf)
        for h in nl.affine_range(2):
            e = nl.exp(xt[:, h * 512:(h + 1) * 512])
            p = nl.multiply(e, xt[:, h * 512:(h + 1) * 512])
            s = nl.sigmoid(p)
            q = nl.multiply(s, p)
            r = nl.tanh(q)
            o[:, h * 512:(h + 1) * 512] = nl.multiply(r, xt[:, h * 512:(h + 1) * 512])
        nl.store(out[t * 128:(t + 1) * 128, :], value=o)
    return out


@nki.jit
def halves_sequential(x):
    T = x.shape[0] // 128
    out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    for t in nl.affine_range(T):
        xt = nl.load(x[t * 128:(t + 1) * 128, :])
        o = nl.ndarray((nl.par_dim(128), 1024), dtype=nl.float32, buffer=nl.sbuf)
        for h in nl.sequential_range(2):
            e = nl.exp(xt[:, h * 512:(h + 1) * 512])
            p = nl.multiply(e, xt[:, h * 512:(h + 1) * 512])
            s = nl.sigmoid(p)
            q = nl.multiply(s, p)
            r = nl.tanh(q)
            o[:, h * 512:(h + 1) * 512] = nl.multiply(r, xt[:, h * 512:(h + 1) * 512])
        nl.store(out[t * 128:(t + 1) * 128, :], value=o)
    return out
