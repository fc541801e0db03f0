# A new user's check: is a per-row scale of the left operand the same as scaling the product?
def scaled(a: f32[M, K], w: f32[K, N], s: f32[M, 1]) -> f32[M, N]:
    return matmul(a * s, w)
