# expect: :3:14: error: write exp(...) without a module prefix: kernel ops are built in
def f(x: f32[N]):
    return np.exp(x)
