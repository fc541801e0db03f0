def rope(x: f32[D, L], cos: f32[D // 2, L], sin: f32[D // 2, L]) -> f32[D, L]:
    """x holds D = 128 features for L = B*H*N positions; the two halves of D rotate."""
    x0 = x[: D // 2, :]
    x1 = x[D // 2 :, :]
    return concat((x0 * cos - x1 * sin, x0 * sin + x1 * cos), axis=0)
