# expect: :3:14: error: comparisons are not supported in the kernel language
def f(x: f32[N]):
    return x < 2
