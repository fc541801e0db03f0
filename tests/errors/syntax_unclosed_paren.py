# expect: :3:15: error: '(' is never closed
def f(x: f32[N]):
    return exp(x
