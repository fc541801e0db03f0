def add_rmsnorm_matmul(x: f32[M, K], z: f32[M, K], g: f32[K], w: f32[K, N]) -> f32[M, N]:
    y = x + z
    y = y / sqrt(sum(square(y) / K, axis=1, keepdims=True) + 1e-5) * g
    return y @ w
