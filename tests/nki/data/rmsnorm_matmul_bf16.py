def rmsnorm(x, eps):
    return x * rsqrt(mean(square(x), axis=1, keepdims=True) + eps)

def rmsnorm_matmul(x: bf16[M, K], w: bf16[K, N], eps: bf16 = 1e-6) -> bf16[M, N]:
    """jobs/kernels/axon/rmsnorm_matmul.py with bf16 tensors."""
    return matmul(rmsnorm(x, eps), w)
