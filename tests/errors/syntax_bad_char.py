# expect: :3:14: error: unexpected character '$'
def f(x: f32[N]):
    return x $ 2
