# expect: :2:18: error: duplicate parameter 'x' in 'f'
def f(x: f32[N], x: f32[N]):
    return x
