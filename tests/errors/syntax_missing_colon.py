# expect: :2:17: error: expected ':' after the function signature, found end of line
def f(x: f32[N])
    return x
