// Builds a Program piece by piece: buffers, loops (blocks) and instructions placed at the end
// (or the start) of a block, and hands it over checked by validate(). The materializer and the
// tests' hand-written programs build through it, so every program is made the same way.
//
// An instruction is made in place (new_inst) and then placed (place): an Inst is large (its short
// lists are inline), so it is never moved once made.
#pragma once

#include <string>
#include <utility>

#include "tilesweep/base/error.h"
#include "tilesweep/lower/program.h"

namespace ts::lower {

class ProgramBuilder {
 public:
  // An empty program of kernel `kernel`: the top-level block alone.
  explicit ProgramBuilder(std::string kernel = {}) {
    program_.kernel = std::move(kernel);
    program_.blocks.push_back(Block{});
  }
  // Goes on building `start` (a program's common beginning, e.g. its HBM tensors).
  explicit ProgramBuilder(Program start) : program_(std::move(start)) {
    if (program_.blocks.empty()) program_.blocks.push_back(Block{});
  }

  // Room for `buffers` buffers, `insts` instructions and `blocks` blocks, so that the vectors are
  // not regrown (moving every Inst) while the program is built.
  void reserve(std::size_t buffers, std::size_t insts, std::size_t blocks) {
    program_.buffers.reserve(buffers);
    program_.insts.reserve(insts);
    program_.blocks.reserve(blocks);
  }

  int add_buffer(Buffer b) {
    program_.buffers.push_back(std::move(b));
    return static_cast<int>(program_.buffers.size()) - 1;
  }

  // A loop of `trips` iterations at the end of block `parent`; returns its block id.
  int loop(int parent, std::string var, std::int64_t trips) {
    TS_CHECK(parent >= 0 && parent < static_cast<int>(program_.blocks.size()),
             "loop in block {} of {}", parent, program_.blocks.size());
    Block b;
    b.var = std::move(var);
    b.trips = trips;
    b.parent = parent;
    program_.blocks.push_back(std::move(b));
    int id = static_cast<int>(program_.blocks.size()) - 1;
    program_.blocks[parent].items.push_back({-1, id});
    return id;
  }

  // A new instruction, not yet placed in a block.
  Inst& new_inst() { return program_.insts.emplace_back(); }

  // Places `in`, the instruction new_inst() made last, at the end (or the start) of `block`;
  // returns its id.
  int place(int block, const Inst& in) { return place_at(block, in, false); }
  int place_first(int block, const Inst& in) { return place_at(block, in, true); }

  // new_inst() and place() of a whole instruction.
  int append(int block, Inst in) {
    Inst& made = new_inst();
    made = std::move(in);
    return place(block, made);
  }

  const Program& program() const { return program_; }
  Program& program() {
    return program_;
  }  // for edits of what was built (a fusion, a test's corner case)
  const Buffer& buffer(int id) const { return program_.buffers[static_cast<std::size_t>(id)]; }
  Buffer& buffer(int id) { return program_.buffers[static_cast<std::size_t>(id)]; }

  // The program, checked: InternalError naming a broken invariant.
  Program build() && {
    validate(program_);
    return std::move(program_);
  }

 private:
  int place_at(int block, const Inst& in, bool first) {
    TS_CHECK(&in == &program_.insts.back(), "an instruction is placed after another was made");
    TS_CHECK(block >= 0 && block < static_cast<int>(program_.blocks.size()),
             "instruction in block {} of {}", block, program_.blocks.size());
    int id = static_cast<int>(program_.insts.size()) - 1;
    auto& items = program_.blocks[static_cast<std::size_t>(block)].items;
    if (first)
      items.insert(items.begin(), Item{id, -1});
    else
      items.push_back(Item{id, -1});
    return id;
  }

  Program program_;
};

}  // namespace ts::lower
