# expect: :5:1: error: 'f' is defined twice (first at line 2)
def f(x: f32[N]):
    return x

def f(y: f32[N]):
    return y
