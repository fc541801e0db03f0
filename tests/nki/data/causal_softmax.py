# A causal softmax: the iota mask lowers to one affine_select per tile whose offset moves with the
# row loop (offset=r * 128 at T = 256, 128-row tiles); the emitted NKI on NumPy's (nki.numpy.mask).
def causal_softmax(s: f32[T, T]) -> f32[T, T]:
    m = where(iota(T, axis=1) <= iota(T, axis=0), s, -inf)
    e = exp(m - max(m, axis=1, keepdims=True))
    return e / sum(e, axis=1, keepdims=True)
