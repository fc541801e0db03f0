# Parameters are matched by name: the order in which they are declared does not matter.
def f(x: f32[N], y: f32[N]) -> f32[N]:
    return x - y
