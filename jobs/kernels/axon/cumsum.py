def cumsum(x: f32[M, N]) -> f32[M, N]:
    return cumsum(x, axis=1)
