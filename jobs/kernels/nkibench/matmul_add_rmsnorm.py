def matmul_add_rmsnorm(x: f32[M, K], w: f32[K, N], z: f32[M, N], g: f32[N]) -> f32[M, N]:
    y = x @ w + z
    return y * g / sqrt(mean(square(y), axis=1, keepdims=True) + 1e-5)
