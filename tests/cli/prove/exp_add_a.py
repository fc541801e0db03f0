# True over the reals, but only with exp(a + b) = exp(a) exp(b), which tilesweep's encoding does
# not assume (exp is uninterpreted): the answer must be `unknown`, never a wrong verdict.
def f(a: f32[N], b: f32[N]) -> f32[N]:
    return exp(a + b)
