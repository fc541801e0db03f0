# expect: :3:16: error: argument 'axis' of 'iota' must be a non-negative integer, not -1
def f(s: f32[S, S]):
    return s * iota(S, axis=-1)
