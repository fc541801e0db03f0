# A sum over each row of a long matrix (one row tile of 128 rows when M = 128): its only loop at
# such a shape is over the row's free tiles, a reduction (README, "Several NeuronCores").
def row_sum(x: f32[M, N]) -> f32[M, 1]:
    return sum(x, axis=1, keepdims=True)
