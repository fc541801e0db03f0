# The same with a per-column scale of the left operand: not a scale of the product.
def scaled(a: f32[M, K], w: f32[K, N], s: f32[1, K]) -> f32[M, N]:
    return matmul(a * s, w)
