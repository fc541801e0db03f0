def row_broadcast(x: f32[M, N], b: f32[1, N], c: f32[1, N]) -> f32[M, N]:
    """Rows b and c broadcast across the partitions (mamba's b and c alike): with pe-broadcast
    each is loaded as one row and broadcast into PSUM by a matmul with a ones stationary."""
    return (x * b) * c + x
