def f(x: f32[N], z: f32[N]) -> f32[N]:
    return x - z
