// Candidate programs of realistic shape for the simulator tests and the benchmark.
#pragma once

#include "program_builder.h"

namespace ts::sim::test {

// load -> activation -> store over `trips` row tiles of [rows, cols], bufs copies of each tile.
inline lower::Program elementwise(const target::Target& t, std::int64_t trips, std::int64_t rows,
                                  std::int64_t cols, int bufs, ir::DType dtype = ir::DType::F32,
                                  int cores = 1) {
  ProgramBuilder b(t);
  int x = b.hbm("x", dtype, {rows * trips, cols});
  int out = b.hbm("out", dtype, {rows * trips, cols});
  int in_t = b.sbuf("in", dtype, {rows, cols}, bufs);
  int bias = b.sbuf("bias", ir::DType::F32, {rows, 1});
  int out_t = b.sbuf("res", dtype, {rows, cols}, bufs);
  int i = b.loop(0, trips);
  b.load(i, in_t, x, i);
  b.op(i, "activation", sem::Engine::Scalar, {in_t, bias}, out_t);
  b.store(i, out_t, out, i);
  b.p.cores = cores;
  return b.p;
}

// out[M, N] = x[M, K] @ w[K, N] in tiles of 128 x 512 (K in steps of 128): per output tile, K/128
// pairs of loads and accumulating matmuls, a PSUM -> SBUF copy on `evict` and a store.
inline lower::Program matmul(const target::Target& t, std::int64_t m, std::int64_t n,
                             std::int64_t k, ir::DType dtype, int bufs,
                             sem::Engine evict = sem::Engine::Vector) {
  ProgramBuilder b(t);
  int xt = b.hbm("xT", dtype, {k, m});
  int w = b.hbm("w", dtype, {k, n});
  int out = b.hbm("out", ir::DType::F32, {m, n});
  int st = b.sbuf("stationary", dtype, {128, 128}, bufs);
  int mv = b.sbuf("moving", dtype, {128, 512}, bufs);
  int acc = b.psum("acc", {128, 512}, 2);
  int res = b.sbuf("res", ir::DType::F32, {128, 512}, bufs);
  int mi = b.loop(0, m / 128, "m");
  int ni = b.loop(mi, n / 512, "n");
  int ki = b.loop(ni, k / 128, "k");
  b.load(ki, st, xt, ki);
  b.load(ki, mv, w, ki);
  b.op(ki, "nc_matmul", sem::Engine::Tensor, {st, mv}, acc, {}, ki);
  if (evict == sem::Engine::Scalar)
    b.op(ni, "activation", evict, {acc, b.sbuf("zero", ir::DType::F32, {128, 1})}, res);
  else
    b.op(ni, "tensor_copy", evict, {acc}, res);
  b.store(ni, res, out, mi);
  return b.p;
}

// rmsnorm-like rows: load, square-and-sum on Scalar, rsqrt on Scalar, scale on Vector, store;
// tiles of [rows, cols] with small partition counts to exercise DMA engine rotation.
inline lower::Program rownorm(const target::Target& t, std::int64_t trips, std::int64_t rows,
                              std::int64_t cols, int bufs) {
  ProgramBuilder b(t);
  int x = b.hbm("x", ir::DType::F32, {rows * trips, cols});
  int out = b.hbm("out", ir::DType::F32, {rows * trips, cols});
  int xt = b.sbuf("x_t", ir::DType::F32, {rows, cols}, bufs);
  int zero = b.sbuf("zero", ir::DType::F32, {rows, 1});
  int ss = b.sbuf("ss", ir::DType::F32, {rows, 1}, bufs);
  int rs = b.sbuf("rs", ir::DType::F32, {rows, 1}, bufs);
  int yt = b.sbuf("y_t", ir::DType::F32, {rows, cols}, bufs);
  int i = b.loop(0, trips);
  b.load(i, xt, x, i);
  b.op(i, "activation_reduce", sem::Engine::Scalar, {xt, zero}, ss);
  b.op(i, "activation", sem::Engine::Scalar, {ss, zero}, rs);
  b.op(i, "tensor_scalar", sem::Engine::Vector, {xt, rs}, yt);
  b.store(i, yt, out, i);
  return b.p;
}

}  // namespace ts::sim::test
