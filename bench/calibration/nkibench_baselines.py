# NKIBench baseline kernels (AccelOpt), their schedules written in tilesweep's own words: the
# loop nests, tile sizes, engines and instruction sequence of the public baselines (compiler
# output of the reference programs). Measured on trn1; latencies in calibration.toml.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def silu(x):
    # x viewed as (128, 32, 7168): partition p, row group g. Per (g, 1024-column chunk): one load,
    # then per 512-column half: exp(-x) on Scalar, + 1, 1 / (..) and x * (..) on Vector; one store.
    P, G, C = x.shape
    out = nl.ndarray((P, G, C), dtype=nl.float32, buffer=nl.shared_hbm)
    zero = nl.zeros((nl.par_dim(P), 1), dtype=nl.float32, buffer=nl.sbuf)
    for g in nl.affine_range(G):
        for c in nl.affine_range(C // 1024):
            xt = nl.ndarray((nl.par_dim(P), 1024), dtype=nl.float32, buffer=nl.sbuf)
            xt[...] = nl.load(x[:, g, c * 1024:(c + 1) * 1024])
            yt = nl.ndarray((nl.par_dim(P), 1024), dtype=nl.float32, buffer=nl.sbuf)
            for h in nl.affine_range(2):
                e = nisa.activation(op=nl.exp, data=xt[:, h * 512:(h + 1) * 512], bias=zero, scale=-1.0)
                d = nisa.tensor_scalar(data=e, op0=nl.add, operand0=1.0)
                r = nisa.reciprocal(data=d)
                yt[:, h * 512:(h + 1) * 512] = nl.multiply(xt[:, h * 512:(h + 1) * 512], r)
            nl.store(out[:, g, c * 1024:(c + 1) * 1024], value=yt)
    return out


@nki.jit
def adamw(theta, grad, m, v):
    # Rows in 128-row tiles (the last one masked), 1024-column chunks: four loads, then per
    # 512-column half the update as 14 instructions (scalar multiplies on Vector, sqrt on Scalar,
    # reciprocal on Vector), one store of the new theta.
    R, C = theta.shape
    out = nl.ndarray((R, C), dtype=nl.float32, buffer=nl.shared_hbm)
    zero = nl.zeros((nl.par_dim(128), 1), dtype=nl.float32, buffer=nl.sbuf)
    ip = nl.arange(128)[:, None]
    jf = nl.arange(1024)[None, :]
    for r in nl.affine_range((R + 127) // 128):
        for c in nl.affine_range(C // 1024):
            rows = (r * 128 + ip < R)
            th = nl.load(theta[r * 128 + ip, c * 1024 + jf], mask=rows)
            mt = nl.load(m[r * 128 + ip, c * 1024 + jf], mask=rows)
            vt = nl.load(v[r * 128 + ip, c * 1024 + jf], mask=rows)
            gt = nl.load(grad[r * 128 + ip, c * 1024 + jf], mask=rows)
            res = nl.ndarray((nl.par_dim(128), 1024), dtype=nl.float32, buffer=nl.sbuf)
            for h in nl.affine_range(2):
                th_h = th[:, h * 512:(h + 1) * 512]
                decay = nisa.tensor_scalar(data=th_h, op0=nl.multiply, operand0=1e-05)
                th_d = nl.subtract(th_h, decay)
                m_s = nisa.tensor_scalar(data=mt[:, h * 512:(h + 1) * 512], op0=nl.multiply, operand0=0.9)
                g_s = nisa.tensor_scalar(data=gt[:, h * 512:(h + 1) * 512], op0=nl.multiply, operand0=0.1)
                m_new = nl.add(m_s, g_s)
                step = nisa.tensor_scalar(data=m_new, op0=nl.multiply, operand0=0.01)
                v_s = nisa.tensor_scalar(data=vt[:, h * 512:(h + 1) * 512], op0=nl.multiply, operand0=0.999)
                g2 = nisa.tensor_scalar(data=gt[:, h * 512:(h + 1) * 512], op0=nl.multiply, operand0=0.001)
                g2 = nl.multiply(g2, gt[:, h * 512:(h + 1) * 512])
                v_new = nl.add(v_s, g2)
                den = nisa.activation(op=nl.sqrt, data=v_new, bias=zero, scale=1000.0)
                den = nisa.tensor_scalar(data=den, op0=nl.add, operand0=1e-08)
                inv = nisa.reciprocal(data=den)
                upd = nl.multiply(step, inv)
                res[:, h * 512:(h + 1) * 512] = nl.subtract(th_d, upd)
            nl.store(out[r * 128 + ip, c * 1024 + jf], value=res, mask=rows)
    return out
