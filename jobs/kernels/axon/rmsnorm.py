def rmsnorm(x: f32[M, N], eps: f32 = 1e-6) -> f32[M, N]:
    return x * rsqrt(mean(square(x), axis=1, keepdims=True) + eps)
