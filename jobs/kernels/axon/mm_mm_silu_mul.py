def mm_mm_silu_mul(x: f32[M, K], w1: f32[K, N], w2: f32[K, N]) -> f32[M, N]:
    return silu(x @ w1) * (x @ w2)
