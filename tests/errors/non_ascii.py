# expect: :3:14: error: non-ASCII character in kernel source (only ASCII is allowed outside comments and strings)
def f(x: f32[N]):
    return x é
