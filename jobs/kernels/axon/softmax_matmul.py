def softmax(x):
    e = exp(x - max(x, axis=1, keepdims=True))
    return e / sum(e, axis=1, keepdims=True)

def softmax_matmul(x: f32[M, K], w: f32[K, N]) -> f32[M, N]:
    return matmul(softmax(x), w)
