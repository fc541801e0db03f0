def hoisted_exp(x: f32[S, C, M], d: f32[1, C, M]) -> f32[C, M]:
    """A value broadcast along S (exp(d), mamba's delta * u alike), computed once per C tile before
    the loop over S that carries the sum over S."""
    return sum(x * exp(d), axis=0)
