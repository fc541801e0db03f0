def repeat_rows(x: f32[M, N]) -> f32[M, 1]:
    return sum(repeat(x, 3, axis=0)[: 2 * M : 2, :], axis=1, keepdims=True)
