# expect: :3:5: error: 'if' is not supported in the kernel language (straight-line code only)
def f(x: f32[N]):
    if x:
        return x
