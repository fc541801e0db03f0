import nki
import nki.language as nl
import nki.isa as nisa

@nki.jit
def add(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    P, F = a.shape
    for i in range(P // 128):
        ta = nl.ndarray((128, F), dtype=a.dtype, buffer=nl.sbuf)
        tb = nl.ndarray((128, F), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=ta, src=a[i * 128:(i + 1) * 128, 0:F])
        nisa.dma_copy(dst=tb, src=b[i * 128:(i + 1) * 128, 0:F])
        tc = nl.ndarray((128, F), dtype=a.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(tc, ta, tb, op=nl.add)
        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, 0:F], src=tc)
    return out
