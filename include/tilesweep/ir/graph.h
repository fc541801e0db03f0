// The tensor IR: a kernel is a DAG of op nodes over its parameters, every node carrying its
// inferred dtype and symbolic shape and its op's element expression instantiated for that shape.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tilesweep/base/error.h"
#include "tilesweep/ir/dtype.h"
#include "tilesweep/semantics/instantiate.h"

namespace ts::ir {

using sem::Dim;

struct Node {
  std::string op;                     // an op of the OpTable; "input" for a parameter
  const sem::OpSpec* spec = nullptr;  // null for inputs
  std::vector<int> inputs;            // node ids, in the op's operand order
  sem::AttrMap attrs;
  std::vector<Dim> shape;
  DType dtype = DType::F32;
  bool weak = false;    // a literal: takes the dtype of what it meets
  sem::TermGraph body;  // the element expression (empty for inputs)
  int param = -1;       // inputs: index into Kernel::params
  std::string label;    // the user's name for the value, if any
  int origin = -1;      // the node of the parsed kernel this one derives from
  SourceLoc loc;
};

struct Param {
  std::string name;
  bool scalar = false;
  DType dtype = DType::F32;
  std::vector<Dim> shape;  // empty for a scalar
  std::optional<double> default_value;
  int node = -1;
  SourceLoc loc;
};

struct Kernel {
  std::string name;
  SourceLoc loc;
  std::vector<Param> params;
  std::vector<Node> nodes;  // topological order: inputs before users
  std::vector<int> outputs;
  std::vector<std::string> dims;                 // symbolic dims in order of first appearance
  std::vector<sem::Precondition> preconditions;  // conditions on the dims for the shapes to work

  const Node& node(int id) const { return nodes[id]; }
};

struct Module {
  std::string file;
  std::vector<Kernel> kernels;

  // The kernel named `name`, or the only kernel when `name` is empty; UserError otherwise
  // (listing the kernels there are).
  const Kernel& kernel(const std::string& name) const;
};

}  // namespace ts::ir
