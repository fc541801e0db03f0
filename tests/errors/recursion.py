# expect: :3:12: error: recursive call to 'g': helpers are inlined, so recursion is not supported
def g(t):
    return g(t)

def f(x: f32[N]):
    return g(x)
