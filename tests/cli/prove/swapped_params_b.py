def f(y: f32[N], x: f32[N]) -> f32[N]:
    return x - y
