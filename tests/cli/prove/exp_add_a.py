# exp(a + b) = exp(a) exp(b): a law of exponents the normal form applies.
def f(a: f32[N], b: f32[N]) -> f32[N]:
    return exp(a + b)
