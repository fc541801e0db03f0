# expect: :3:12: error: 'reshape' requires numel(S) == numel(T): M * N == M * M does not hold (it would need M == N: give both dims one name)
def f(x: f32[M, N]):
    return reshape(x, (M, M))
