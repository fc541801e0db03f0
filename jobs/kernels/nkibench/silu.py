def silu(x: f32[M, N]) -> f32[M, N]:
    return x / (1 + exp(-x))
