# expect: :3:5: error: nested function definitions are not supported; define 'g' at the top level
def f(x: f32[N]):
    def g(y):
        return y
    return x
