def f(a: f32[N]) -> f32[N]:
    return -tanh(a)
