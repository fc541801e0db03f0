def scaled(a: f32[M, K], w: f32[K, N], s: f32[1, K]) -> f32[M, N]:
    return matmul(a, w) * sum(s, axis=1, keepdims=True)
