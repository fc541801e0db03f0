# expect: :3:18: error: 'iota': axis 2 needs 0 <= axis < ndim <= 8 (ndim is 2)
def f(s: f32[S, S]):
    return where(iota(S, axis=2, ndim=2) <= iota(S, axis=0), s, -inf)
