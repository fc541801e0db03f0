// Parsing of command-line values shared by verbs (--shape, --input, --ops), with errors that
// name the argument.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tilesweep/ir/graph.h"
#include "tilesweep/semantics/dim.h"
#include "tilesweep/semantics/op_spec.h"

namespace ts::cli {

// "M=4096,N=2048" -> {M: 4096, N: 2048}. Throws UserError naming --shape.
sem::DimEnv parse_shape_arg(const std::string& text);

// Checks --shape against a kernel: every dim given, none unknown, all positive, the kernel's
// preconditions hold. Throws UserError naming --shape.
void check_dims(const ir::Kernel& k, const sem::DimEnv& dims);

// "x=path.npy" -> {"x", "path.npy"}. Throws UserError naming --input.
std::pair<std::string, std::string> parse_input_arg(const std::string& text);

// The built-in ops plus those of each --ops file.
sem::OpTable load_ops(const std::vector<std::string>& ops_files);

}  // namespace ts::cli
