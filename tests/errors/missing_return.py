# expect: :2:1: error: 'f' has no return statement; a kernel or helper must end with `return ...`
def f(x: f32[N]):
    y = exp(x)
