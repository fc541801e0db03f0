# expect: :2:1: error: 'exp' is the name of a built-in op; choose another name for the function
def exp(x: f32[N]):
    return x
