# expect: :4:16: error: unknown name 'z'
def f(x: f32[N]):
    y = exp(x)
    return exp(z)
