# expect: :2:24: error: 'f' returns 1 value(s) but its annotation declares 2
def f(x: f32[M, N]) -> (f32[M, N], f32[M, N]):
    return x
