def bmm(a: f32[B, M, K], b: f32[B, K, N]) -> f32[B, M, N]:
    return matmul(a, b)
