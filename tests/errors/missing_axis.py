# expect: :3:12: error: 'mean' needs the argument 'axis'
def f(x: f32[M, N]):
    return mean(x)
