# expect: :3:12: error: 'where' operands do not broadcast together: 'c' has shape [M, N] and 'b' has shape [N, M]
def f(x: f32[M, N], y: f32[N, M]):
    return where(x < 0, x, y)
