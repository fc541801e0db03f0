def rmsnorm(x, eps):
    return x * rsqrt(mean(square(x), axis=1, keepdims=True) + eps)

def matmul_add_rmsnorm(x: f32[M, K], w: f32[K, N], z: f32[M, N], eps: f32 = 1e-6) -> f32[M, N]:
    return rmsnorm(matmul(x, w) + z, eps)
