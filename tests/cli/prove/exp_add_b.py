def f(a: f32[N], b: f32[N]) -> f32[N]:
    return exp(a) * exp(b)
