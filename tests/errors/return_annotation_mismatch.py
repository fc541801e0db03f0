# expect: :2:27: error: 'f' returns f32[M, N] but its annotation declares f32[N, M]
def f(x: f32[M, N]) -> f32[N, M]:
    return exp(x)
