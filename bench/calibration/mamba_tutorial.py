# The NKI "Fused Mamba" tutorial's kernels (AWS Neuron SDK docs), written in tilesweep's words
# after the tutorial's description of their schedules: channels on the partitions in 128-channel
# tiles, the sequence on the free dim, per (state, channel tile) exp(delta * A) on Scalar (the
# scale one value per partition, folded into the activation), delta * u and * B (B broadcast to
# the partitions on the Tensor engine) on Vector, the associative scan (tensor_tensor_scan) on
# Vector, * C (broadcast likewise), accumulated over the states. Batch 1: delta / u [C, S],
# a [C, states], b / c [states, S]. Published latencies in calibration.toml.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


def _mamba_state(d, uu, a, b, c, t, st, acc, i):
    # One state for one 128-channel tile: steps 1-6 of the tutorial.
    P, S = d.shape
    a_i = nl.load(a[t * P:(t + 1) * P, st:st + 1])
    dA = nisa.activation(op=nl.exp, data=d, scale=a_i)
    b_i = nl.load(b[st:st + 1, :])
    dU = nisa.tensor_tensor(d, uu, op=nl.multiply)
    dBu = nisa.tensor_tensor(dU, b_i.broadcast_to((P, S)), op=nl.multiply)
    scan = nisa.tensor_tensor_scan(dA, dBu, initial=0, op0=nl.multiply, op1=nl.add)
    c_i = nl.load(c[st:st + 1, :])
    sC = nisa.tensor_tensor(scan, c_i.broadcast_to((P, S)), op=nl.multiply)
    acc[i] = nl.add(acc[i], sC)


@nki.jit
def mamba_v1(delta, u, a, b, c):
    # v1: states outside, channel tiles inside; one accumulator per channel tile for the whole
    # kernel, stored at the end. The source loads delta and u per (state, channel tile); the
    # compiler shares those loads between pairs of states (the tutorial's profile: "we reload both
    # the input u and delta tensors around 7 times" for 16 states; the NKIBench mamba baseline,
    # this kernel, reads 126.6 MB outside spill at 7168 x 256: delta and u 8 times each), so this
    # version loads them once per two states.
    CH, S = delta.shape
    NS = a.shape[1]
    NT = CH // 128
    out = nl.ndarray((CH, S), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((NT, nl.par_dim(128), S), dtype=nl.float32, buffer=nl.sbuf)
    for sp in nl.affine_range(NS // 2):
        for t in nl.affine_range(NT):
            d = nl.load(delta[t * 128:(t + 1) * 128, :])
            uu = nl.load(u[t * 128:(t + 1) * 128, :])
            for k in nl.affine_range(2):
                _mamba_state(d, uu, a, b, c, t, sp * 2 + k, acc, t)
    for t in nl.affine_range(NT):
        nl.store(out[t * 128:(t + 1) * 128, :], value=acc[t])
    return out


@nki.jit
def mamba_v2(delta, u, a, b, c):
    # v2: the loops reordered (channel tiles outside, states inside) so delta and u are loaded
    # once per channel tile, and the store fused into the channel loop with a per-tile accumulator.
    CH, S = delta.shape
    NS = a.shape[1]
    out = nl.ndarray((CH, S), dtype=nl.float32, buffer=nl.shared_hbm)
    for t in nl.affine_range(CH // 128):
        acc = nl.zeros((1, nl.par_dim(128), S), dtype=nl.float32, buffer=nl.sbuf)
        d = nl.load(delta[t * 128:(t + 1) * 128, :])
        uu = nl.load(u[t * 128:(t + 1) * 128, :])
        for st in nl.affine_range(NS):
            _mamba_state(d, uu, a, b, c, t, st, acc, 0)
        nl.store(out[t * 128:(t + 1) * 128, :], value=acc[0])
    return out
