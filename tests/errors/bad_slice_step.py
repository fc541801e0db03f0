# expect: :3:16: error: a slice step must be a positive integer constant
def f(x: f32[M, N]):
    return x[::0]
