# expect: :3:5: error: expression statement in 'f' has no effect; assign it to a name or return it
def f(x: f32[N]):
    exp(x)
    return x
