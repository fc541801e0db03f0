# expect: :3:14: error: 'matmul' cannot take 'a' of shape [M]: expected a shape like [*B, m, k]
def f(x: f32[M], w: f32[M, N]):
    return x @ w
