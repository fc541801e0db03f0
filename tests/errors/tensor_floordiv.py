# expect: :3:14: error: operator '//' is not supported on tensors
def f(x: f32[N]):
    return x // 2
