def rope(x: f32[M, N], cos: f32[M, N // 2], sin: f32[M, N // 2]) -> f32[M, N]:
    x0 = x[:, : N // 2]
    x1 = x[:, N // 2 :]
    return concat((x0 * cos - x1 * sin, x0 * sin + x1 * cos), axis=1)
