# expect: :3:13: error: argument 'dtype' of 'astype' must be one of f32, bf16, f16, f8, got 1
def f(x: f32[N]):
    return x.astype(1)
