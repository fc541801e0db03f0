# expect: :3:7: error: augmented assignment '+=' is not supported; write `x = x + ...`
def f(x: f32[N]):
    x += 1
    return x
