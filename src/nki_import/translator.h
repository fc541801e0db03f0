// The translator behind import_kernel: runs the kernel's Python at import time with loop variables
// kept symbolic, and emits one program instruction per NKI instruction (or per instruction the
// compiler would emit for an nl.* function) into the loop block it runs in. Private to the library.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tilesweep/lower/program_builder.h"
#include "tilesweep/nki_import/ast.h"
#include "tilesweep/nki_import/importer.h"
#include "tilesweep/nki_import/value.h"

namespace ts::nki {

// An array of the kernel: an HBM tensor or an on-chip tile (its logical shape; on chip the
// physical buffer is [shape[par], product of the other dims]).
struct Array {
  std::string name;
  sem::Memory memory = sem::Memory::Sbuf;
  ir::DType dtype = ir::DType::F32;
  std::vector<std::int64_t> shape;
  int par = 0;  // on chip: the partition dim (dims before it are block dims)
  int buffer = -1;
  int block = 0;        // the program block it was allocated in
  bool zeroed = false;  // nl.zeros in PSUM, not yet written: the first += writes
};

// An on-chip operand: a window of a buffer, [parts, width].
struct Operand {
  int buffer = -1;
  lower::Window win;
  std::int64_t parts = 0, width = 0;
};

// The HBM side of a DMA and the on-chip tile shape it fills.
struct HbmAccess {
  lower::Access access;
  std::int64_t parts = 1, width = 1;            // what moves (after masks)
  std::int64_t grid_parts = 1, grid_width = 1;  // the index grid (the tile a load fills)
  bool empty = false;                           // a mask leaves nothing to move
  bool clipped = false;                         // a mask made it smaller than its grid
};

// Thrown when a value must be known per iteration (a mask that cuts the tile in some iterations
// of a loop): the loop of `block` is then unrolled.
struct NeedConcrete {
  int block = -1;
  SourceLoc loc;
  std::string what;
};

using Args = std::map<std::string, Value>;

// Buffers the allocator rotates for a tile allocated inside a parallel loop (affine_range /
// range), before the fallback halves them to fit (README: "Where the compiler chooses").
constexpr int kRotatingBuffers = 2;
// The longest innermost affine_range loop whose iterations are interleaved (interleave.cpp).
constexpr std::int64_t kInterleaveTrips = 4;
class Translator {
 public:
  Translator(const Module& m, const target::Target& t);
  ImportedKernel run(const Stmt& kernel, const std::vector<KernelArg>& args);
  const Stmt* function(const std::string& name) const;
  bool is_jit(const Stmt& def);

 private:
  // statements (translator.cpp)
  void exec_block(const Block& b);
  void exec(const Stmt& s);
  void assign(const ExprPtr& target, const ExprPtr& value, const SourceLoc& loc);
  void bind(const ExprPtr& target, const Value& v);
  void aug_assign(const Stmt& s);
  void for_loop(const Stmt& s);
  std::optional<NeedConcrete> loop(const Stmt& s, const Value& range, std::int64_t trips);
  void unroll(const Stmt& s, const Value& range, std::int64_t from, std::int64_t to);
  bool interleavable(const Stmt& s, const Value& range) const;
  void interleave(const Stmt& s, const Value& range);
  void import(const Stmt& s);
  Value call_function(const Stmt& def, const Expr& call);
  void single_buffer_if_over();
  bool fits_on_chip(const lower::Program& p) const;
  void contract_arrays();

  // expressions (eval.cpp)
  Value eval(const ExprPtr& e);
  Value eval_into(const ExprPtr& e, const Value* dst, bool accumulate);
  Value lookup(const Expr& e);
  Value attribute(const Expr& e);
  Value subscript(const Expr& e);
  Value binary(const Expr& e);
  Value unary(const Expr& e);
  Value call(const Expr& e, const Value* dst, bool accumulate);
  Value builtin(const std::string& name, const Expr& e);
  Args bind_args(const Expr& call, const std::vector<std::string>& names, bool dst_first);
  std::int64_t const_int(const Value& v, const SourceLoc& loc, const char* what) const;
  double number(const Value& v, const SourceLoc& loc, const char* what) const;
  bool truth(const Value& v, const SourceLoc& loc) const;

  // index grids and views (views.cpp)
  Value index_arith(const std::string& op, const Value& l, const Value& r, const SourceLoc& loc);
  Value compare(const std::string& op, const Value& l, const Value& r, const SourceLoc& loc);
  std::vector<Value> expand_index(const Value& view, std::size_t rank, const SourceLoc& loc) const;
  HbmAccess hbm_access(const Value& view, const std::vector<Cond>& mask, const SourceLoc& loc);
  Operand operand(const Value& v, const SourceLoc& loc);
  std::int64_t clip(const Cond& c, std::int64_t size);
  std::pair<std::int64_t, std::int64_t> range_of(const Affine& a) const;

  // instructions (emit.cpp)
  int alloc(const std::string& name, sem::Memory m, ir::DType dt, std::vector<std::int64_t> shape,
            int par, const SourceLoc& loc);
  Operand whole(int array) const;
  Value emit(const std::string& instr, std::optional<sem::Engine> engine,
             const std::vector<Operand>& in, sem::AttrMap attrs, const Value* dst,
             std::optional<ir::DType> dtype, bool accumulate, const SourceLoc& loc);
  void emit_dma(const HbmAccess& h, const Operand& tile, bool store, const SourceLoc& loc);
  Operand constant(double value, std::int64_t parts, const SourceLoc& loc);
  int memset_tile(std::string name, double value, std::int64_t parts, std::int64_t free,
                  const SourceLoc& loc);
  Operand ones_row(std::int64_t n, const SourceLoc& loc);
  Value broadcast_partitions(const Value& x, const Value& shape, const SourceLoc& loc);
  int accumulate_block(Array& a, const SourceLoc& loc);
  const sem::InstrSpec& spec(const std::string& name, const SourceLoc& loc) const;
  std::optional<sem::Engine> engine_of(const Value& v, const SourceLoc& loc) const;

  // nl.* and nisa.* (language.cpp, isa.cpp)
  Value call_language(const std::string& fn, const Expr& e, const Value* dst, bool accumulate);
  Value language_math(const std::string& fn, const Expr& e, const Value* dst, bool accumulate);
  Value elementwise(const std::string& alu, const Value& a, const Value& b, const Value* dst,
                    std::optional<ir::DType> dt, bool accumulate, const SourceLoc& loc);
  Value load(const Args& a, const Value* dst, const SourceLoc& loc);
  Value store(const Value& dst, const Value& value, const std::vector<Cond>& mask,
              const SourceLoc& loc);
  Value matmul(const Value& stationary, const Value& moving, const Value* dst, bool accumulate,
               const SourceLoc& loc);
  Value copy_into(const Value& src, const Value* dst, std::optional<ir::DType> dt,
                  const SourceLoc& loc);
  Value allocate(const std::string& fn, const Args& a, const SourceLoc& loc);
  Value reduce(const std::string& op, const Args& a, const Value* dst, const SourceLoc& loc);
  Value transpose(const Value& x, std::optional<sem::Engine> engine, const Value* dst,
                  const SourceLoc& loc);
  Value make_range(const std::string& kind, const Args& a, const SourceLoc& loc);
  Value call_isa(const std::string& fn, const Expr& e, const Value* dst, bool accumulate);
  std::string alu_name(const Value& v, const SourceLoc& loc) const;
  std::string func_name(const Value& v, const SourceLoc& loc) const;
  std::optional<ir::DType> dtype_arg(const Args& a, const char* key, const SourceLoc& loc) const;

  const Module& module_;
  const target::Target& target_;
  lower::ProgramBuilder builder_;
  std::vector<Array> arrays_;
  std::vector<std::map<std::string, Value>>
      scopes_;  // [0] the file's globals, then function frames
  std::map<std::string, const Stmt*> functions_;
  std::map<int, bool> sequential_;  // per loop block: sequential_range
  std::map<std::pair<double, std::int64_t>, int> constants_;
  std::map<std::int64_t, int> ones_rows_;  // n -> the [1, n] ones buffer
  std::optional<Value> returned_;
  std::map<std::string, int> site_buffers_;  // allocation site -> its latest buffer
  int block_ = 0, nest_ = -1, nests_ = 0, call_depth_ = 0, tensor_params_ = 0, reuse_ = 0;
  bool new_api_ = false;
};

}  // namespace ts::nki
