def softmax(x: f32[M, N]) -> f32[M, N]:
    e = exp(x - max(x, axis=1, keepdims=True))
    return e / sum(e, axis=1, keepdims=True)
