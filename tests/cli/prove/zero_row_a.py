# Undefined (0 / 0) on a row of zeros, where the other side is 0: not equivalent.
def f(x: f32[M, N]) -> f32[M]:
    return sum(x - mean(x, axis=1, keepdims=True), axis=1) / sum(square(x), axis=1)
