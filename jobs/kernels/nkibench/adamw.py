def adamw(theta: f32[M, N], g: f32[M, N], m: f32[M, N], v: f32[M, N]) -> f32[M, N]:
    """One AdamW step with the NKIBench constants (lr 0.01, weight decay 1e-5, betas 0.9/0.999)."""
    theta_t = theta - 1e-5 * theta
    m_t = 0.9 * m + 0.1 * g
    v_t = 0.999 * v + 0.001 * square(g)
    return theta_t - 0.01 * m_t / (sqrt(1000.0 * v_t) + 1e-8)
