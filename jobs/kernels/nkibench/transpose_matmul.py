def transpose_matmul(lhs: f32[K, M], rhs: f32[K, N]) -> f32[M, N]:
    return transpose(lhs) @ rhs
