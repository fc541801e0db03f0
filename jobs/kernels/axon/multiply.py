def multiply(x: f32[M, N], y: f32[M, N]) -> f32[M, N]:
    return x * y
