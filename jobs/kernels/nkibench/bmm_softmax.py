def bmm_softmax(a: f32[B, M, K], b: f32[B, K, N]) -> f32[B, M, N]:
    s = matmul(a, b)
    e = exp(s - max(s, axis=2, keepdims=True))
    return e / sum(e, axis=2, keepdims=True)
