# expect: :2:19: error: only scalar parameters may have a default
def f(x: f32[N] = 1.0):
    return x
