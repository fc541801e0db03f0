def matmul(x: f32[M, K], w: f32[K, N]) -> f32[M, N]:
    return x @ w
