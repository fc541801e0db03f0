# expect: :6:12: error: 'g' needs the argument 'b'
def g(a, b):
    return a * b

def f(x: f32[N]):
    return g(x)
