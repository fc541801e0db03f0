def rmsnorm_matmul(x: f32[M, K], w: f32[K, N]) -> f32[M, N]:
    """NKIBench's variant: no eps, no gamma. It writes sum(x^2 / K, 1); mean(square(x), axis=1) is
    the same value."""
    return matmul(x / sqrt(mean(square(x), axis=1, keepdims=True)), w)
