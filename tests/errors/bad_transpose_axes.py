# expect: :3:12: error: 'transpose' needs 3 axes for 'x' of rank 3, got (0, 1)
def f(x: f32[A, B, C]):
    return transpose(x, axes=(0, 1))
