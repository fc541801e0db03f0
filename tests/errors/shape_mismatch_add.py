# expect: :3:14: error: 'add' operands do not broadcast together: 'a' has shape [M, N] and 'b' has shape [M, K]
def f(x: f32[M, N], y: f32[M, K]):
    return x + y
