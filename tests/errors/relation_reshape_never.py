# expect: :4:12: error: 'reshape' requires numel(S) == numel(T): M * N == M * N + M does not hold
# One more row than the input has: no dims satisfy it.
def f(x: f32[M, N]):
    return reshape(x, (M, N + 1))
