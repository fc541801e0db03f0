# expect: :3:16: error: malformed number '1e'
def f(x: f32[N]):
    return x * 1e
