# expect: :1:1: error: no kernels in this file: a kernel is a `def` whose parameters all have types, like `def k(x: f32[M, N]) -> f32[M, N]:`
def g(t):
    return t
