# expect: :2:1: error: a kernel output must be a tensor or a number, not a bool
def f(x: f32[N]):
    return 1 < 2
