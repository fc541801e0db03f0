# expect: :2:10: error: unknown dtype 'float32' (expected f32, bf16, f16 or f8)
def f(x: float32[N]):
    return x
