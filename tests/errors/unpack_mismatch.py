# expect: :3:5: error: cannot unpack a tensor into 2 names
def f(x: f32[N]):
    a, b = x
    return a
