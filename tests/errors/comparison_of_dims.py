# expect: :3:11: error: a comparison of dims (M < N) is not a value: dims are unknown until bound; compare index tensors such as iota(N, axis=0) instead
def f(x: f32[M, N]):
    m = M < N
    return x
