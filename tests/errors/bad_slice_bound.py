# expect: :3:16: error: index 9 is out of range for a dim of size 4
def f(x: f32[4, N]):
    return x[1:9]
