# expect: :3:13: error: too many indices (3) for a tensor of rank 2 [M, N]
def f(x: f32[M, N]):
    return x[:, :, 1]
