def rmsnorm(x, eps):
    return x * rsqrt(mean(square(x), axis=1, keepdims=True) + eps)

def rmsnorm_matmul(x: f32[M, K], w: f32[K, N], eps: f32 = 1e-6) -> f32[M, N]:
    return matmul(rmsnorm(x, eps), w)
