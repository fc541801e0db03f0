// The kernel-language front end: source text to typed kernel graphs. Resolves names, inlines
// helper functions, maps operators and calls to ops of the OpTable, and infers every dtype and
// shape from the op semantics (sem::instantiate). Errors are UserErrors at file:line:col.
#pragma once

#include <string>

#include "tilesweep/ir/graph.h"
#include "tilesweep/semantics/op_spec.h"

namespace ts::ir {

// A def is a kernel when every parameter is annotated (`x: f32[M, N]`, `eps: f32 = 1e-6`);
// defs with unannotated parameters are helpers, inlined where they are called.
Module parse_module(const std::string& text, const std::string& file, const sem::OpTable& ops);

// Reads and parses a kernel file (read_text_file's checks: exists, text, size limit).
Module load_module(const std::string& path, const sem::OpTable& ops);

}  // namespace ts::ir
