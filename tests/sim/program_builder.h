// Hand-built candidate programs for the simulator tests: buffers, loops and instructions
// appended one by one through lower::ProgramBuilder, with the cost variables left to the
// simulator's defaults (operand tile sizes) unless given.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tilesweep/lower/program_builder.h"
#include "tilesweep/target/target.h"

namespace ts::sim::test {

class ProgramBuilder {
 public:
  explicit ProgramBuilder(const target::Target& t) : t_(t) {}

  int hbm(const std::string& name, ir::DType d, std::vector<std::int64_t> shape) {
    return add_buffer(name, sem::Memory::Hbm, d, std::move(shape), 1);
  }
  int sbuf(const std::string& name, ir::DType d, std::vector<std::int64_t> shape, int bufs = 1) {
    return add_buffer(name, sem::Memory::Sbuf, d, std::move(shape), bufs);
  }
  int psum(const std::string& name, std::vector<std::int64_t> shape, int bufs = 1) {
    return add_buffer(name, sem::Memory::Psum, ir::DType::F32, std::move(shape), bufs);
  }

  // A loop of `trips` iterations appended to block `parent`; returns its block id.
  int loop(int parent, std::int64_t trips, const std::string& var = "i") {
    return builder_.loop(parent, var, trips);
  }

  // HBM -> SBUF (or SBUF -> HBM for a store) of a whole [rows, cols] tile of a 2-D tensor, the
  // tile at row block `row_loop`'s iteration (-1: row 0).
  int load(int block, int tile, int tensor, int row_loop = -1) {
    return dma(block, tile, tensor, row_loop, false);
  }
  int store(int block, int tile, int tensor, int row_loop = -1) {
    return dma(block, tile, tensor, row_loop, true);
  }

  int op(int block, const std::string& instr, sem::Engine e, std::vector<int> in, int out,
         lower::CostVars vars = {}, int accumulate_block = -1) {
    lower::Inst i;
    i.spec = spec(instr);
    i.engine = e;
    i.in = std::move(in);
    i.out = out;
    i.vars = std::move(vars);
    i.accumulate_block = accumulate_block;
    return append(block, std::move(i));
  }

 private:
  lower::ProgramBuilder builder_;

 public:
  lower::Program& p = builder_.program();

 private:
  int add_buffer(const std::string& name, sem::Memory m, ir::DType d,
                 std::vector<std::int64_t> shape, int bufs) {
    lower::Buffer b;
    b.name = name;
    b.memory = m;
    b.dtype = d;
    b.shape = std::move(shape);
    b.bufs = bufs;
    return builder_.add_buffer(std::move(b));
  }

  const sem::InstrSpec* spec(const std::string& name) const {
    const sem::InstrSpec* s = t_.isa.find(name);
    if (!s) throw std::runtime_error("no instruction " + name);
    return s;
  }

  int dma(int block, int tile, int tensor, int row_loop, bool store) {
    lower::Inst i;
    i.spec = spec("dma_copy");
    i.engine = sem::Engine::Dma;
    i.dma = true;
    i.store = store;
    if (store)
      i.in = {tile};
    else
      i.out = tile;
    const auto& shape = p.buffers[tile].shape;
    i.hbm.buffer = tensor;
    i.hbm.extent = {shape[0], shape[1]};
    i.hbm.terms = {{}, {}};
    if (row_loop >= 0) i.hbm.terms[0].push_back({row_loop, shape[0]});
    i.hbm.tile_dim = {0, 1};
    return append(block, std::move(i));
  }

  int append(int block, lower::Inst i) { return builder_.append(block, std::move(i)); }

  const target::Target& t_;
};

}  // namespace ts::sim::test
