# expect: :3:12: error: 'matmul' needs matching dims: k of 'a' [M, K] is K, but of 'b' [N, K] is N
def f(x: f32[M, K], w: f32[N, K]):
    return matmul(x, w)
