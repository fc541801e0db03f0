def transpose_matmul(x: f32[K, M], w: f32[K, N]) -> f32[M, N]:
    return matmul(transpose(x), w)
