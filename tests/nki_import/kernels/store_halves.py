# Stores of a tile filled in two column halves, one per iteration of a loop (the input is loaded
# once): the halves are one version of the tile (one of its two rotating buffers), so the next
# iteration's halves go to the other buffer while this one's store runs. (Each half once counted
# as a version of its own: the two halves took both buffers and every tile waited for the
# previous store, its DMA start latency included.) store_whole: the same with one instruction.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def store_halves(x, reps):
    out = nl.ndarray((reps, 128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
    xt = nl.load(x)
    for t in nl.affine_range(reps):
        o = nl.ndarray((nl.par_dim(128), 1024), dtype=nl.float32, buffer=nl.sbuf)
        for h in nl.affine_range(2):
            o[:, h * 512:(h + 1) * 512] = nl.multiply(xt[:, h * 512:(h + 1) * 512], 2.0)
        nl.store(out[t], value=o)
    return out


@nki.jit
def store_whole(x, reps):
    out = nl.ndarray((reps, 128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
    xt = nl.load(x)
    for t in nl.affine_range(reps):
        o = nl.multiply(xt, 2.0)
        nl.store(out[t], value=o)
    return out
