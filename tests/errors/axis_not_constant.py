# expect: :3:12: error: argument 'axis' of 'sum' must be a constant, not a tensor
def f(x: f32[M, N]):
    return sum(x, axis=x)
