# expect: :3:12: error: 'exp' takes at most 1 argument(s) (x), got 2
def f(x: f32[N]):
    return exp(x, x)
