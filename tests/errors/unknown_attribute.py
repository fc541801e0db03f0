# expect: :3:13: error: unknown attribute '.shape' of a tensor (only .T is supported; ops are called as methods, like x.astype(bf16))
def f(x: f32[M, N]):
    return x.shape
