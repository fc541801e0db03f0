# expect: :3:18: error: chained comparisons like a < b < c are not supported; multiply the masks: (a < b) * (b < c)
def f(x: f32[N]):
    return x < 2 < 3
