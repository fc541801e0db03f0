# expect: :2:1: error: helper 'exp' has the name of a built-in op; choose another name for the function
def exp(x):
    return x

def f(x: f32[N]):
    return exp(x)
