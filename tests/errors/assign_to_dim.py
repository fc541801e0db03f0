# expect: :3:5: error: 'N' is a dim of kernel 'f'; choose another name for the variable
def f(x: f32[M, N]):
    N = x
    return N
