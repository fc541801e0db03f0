# expect: :3:12: error: 'repeat' requires repeats >= 1: 0 >= 1 does not hold
def f(x: f32[N]):
    return repeat(x, 0, axis=0)
