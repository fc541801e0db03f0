# expect: :2:14: error: a dim must be positive, not 0: a tensor needs at least one element along every dim
def f(x: f32[0, 4]):
    return x
