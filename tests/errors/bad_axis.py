# expect: :3:12: error: axis 2 is out of range for 'x' of rank 2 in 'sum' (valid: -2 to 1)
def f(x: f32[M, N]):
    return sum(x, axis=2)
