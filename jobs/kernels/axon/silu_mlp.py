def silu_mlp(x: f32[M, K], w1: f32[K, N], w3: f32[K, N], w2: f32[N, K]) -> f32[M, K]:
    return matmul(silu(x @ w1) * (x @ w3), w2)
