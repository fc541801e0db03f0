# expect: :4:5: error: unreachable statement after return
def f(x: f32[N]):
    return x
    y = x
