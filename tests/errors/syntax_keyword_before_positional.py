# expect: :3:24: error: positional argument follows keyword argument
def f(x: f32[M, N]):
    return sum(axis=1, x)
