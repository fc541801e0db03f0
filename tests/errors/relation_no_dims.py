# expect: :4:14: error: 'add' operands do not broadcast together: 'a' has shape [2 * M] and 'b' has shape [2 * N + 1]
# 2 * M == 2 * N + 1 holds for no dims (an even size is never odd): an error, not a precondition.
def f(x: f32[2 * M], y: f32[2 * N + 1]):
    return x + y
