# expect: :3:12: error: 'where' needs the argument 'b'
def f(x: f32[N], y: f32[N]):
    return where(x < y, x)
