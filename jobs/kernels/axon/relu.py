def relu(x: f32[M, N]) -> f32[M, N]:
    return relu(x)
