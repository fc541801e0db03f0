#include "tilesweep/lower/nki.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "tilesweep/base/error.h"
#include "tilesweep/lower/nki_shapes.h"
#include "tilesweep/lower/reduction_fusion.h"

namespace ts::lower {

namespace {

const char* nki_dtype(ir::DType t) {
  switch (t) {
    case ir::DType::F8:
      return "nl.float8_e4m3";
    case ir::DType::BF16:
      return "nl.bfloat16";
    case ir::DType::F16:
      return "nl.float16";
    case ir::DType::F32:
      return "nl.float32";
  }
  return "nl.float32";
}

const char* nki_memory(sem::Memory m) {
  switch (m) {
    case sem::Memory::Sbuf:
      return "nl.sbuf";
    case sem::Memory::Psum:
      return "nl.psum";
    case sem::Memory::Hbm:
      return "nl.hbm";
  }
  return "nl.sbuf";
}

std::string py_tuple(const std::vector<std::int64_t>& v) {
  if (v.size() == 1) return fmt::format("({},)", v[0]);
  return fmt::format("({})", fmt::join(v, ", "));
}

std::string py_float(double v) {
  if (std::isnan(v)) return "float('nan')";
  if (std::isinf(v)) return v > 0 ? "float('inf')" : "-float('inf')";
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string py_dim(const sem::Dim& d) { return d.is_const() ? std::to_string(d.value()) : d.str(); }

// True when the instruction's single operand pattern comes out with its dims reversed (a
// transposing instruction: out = [f, p] of src = [p, f]).
bool transposes(const sem::OpSpec& op) {
  if (op.shapes.empty() || op.shapes[0].items.size() != 2 || op.out.items.size() != 2) return false;
  const auto& in = op.shapes[0].items;
  const auto& out = op.out.items;
  return in[0].name != out[0].name && in[0].name == out[1].name && in[1].name == out[0].name;
}

// A DMA's HBM side as emitted: the view, and whether the access transposes relative to the
// instruction (the view read transposed).
struct HbmView {
  std::string text;
  bool transposed = false;
};

class Emitter {
 public:
  Emitter(const Program& p, const std::vector<NkiParam>& params, NkiApi api,
          const NkiShapes* shapes);
  std::string run();

 private:
  bool current() const { return api_ == NkiApi::Current; }
  std::string unique(const std::string& base);
  void place_buffers();
  void header(const std::string& name);
  void block(int b, int depth);
  void zero(int buf, int depth, const std::string& slot = "");
  void declare_alias(int b);
  void line(int depth, const std::string& text) {
    out_ += std::string(4 * depth, ' ') + text + "\n";
  }
  void lines(int depth, const std::string& text, const std::string& comment);
  std::string scratch(int depth, const std::vector<std::int64_t>& shape);
  void inst(int i, int depth);
  bool special_dma(int i, int depth);
  bool partial_dma(int i, int depth);
  void refuse_repeats(const Inst& in) const;
  std::vector<std::string> arange_indices(int depth, const std::vector<std::int64_t>& shape);
  std::string affine(const Terms& terms, std::int64_t offset) const;
  std::string slice(const Terms& terms, std::int64_t offset, std::int64_t extent,
                    std::int64_t stride) const;
  std::string tile_expr(int buf, const Window* w, const std::string& slot = "") const;
  void find_rotated();
  std::string slot(int inst, int buf, int lag) const;
  std::string trips_text(int b) const;
  HbmView hbm_view(const Inst& in, const std::vector<std::int64_t>& tile) const;
  std::string attr(const Inst& in, const std::string& name) const;
  std::string buffer_dtype(int buf) const;
  std::string hbm_shape(int buf) const;
  void shape_asserts();

  const Program& p_;
  const std::vector<NkiParam>& param_specs_;
  std::vector<std::string> params_;
  NkiApi api_;
  const NkiShapes* shapes_;  // generic sizes; null: every size as built
  std::set<std::string> used_;
  std::vector<std::string> buf_name_, var_;
  std::vector<int> inst_block_, depth_of_;
  std::map<int, std::vector<int>> declare_at_;  // block -> on-chip buffers declared there
  std::map<int, std::set<int>> zero_before_;    // accumulate block -> PSUM buffers zeroed
  std::set<int> aliased_;                       // HBM aliases declared
  std::map<int, ir::DType> transposed_psum_;  // PSUM tiles a transpose writes -> its input's dtype
  std::vector<std::string> index_var_;        // legacy partial tiles: nl.arange index per tile dim
  // A tile a software-pipelined loop hands to its next iteration (software_pipeline.h): one array
  // of `copies` tiles along a dim after the partition dim, rotated by the loop's variable.
  struct Rotated {
    int loop = -1;   // the pipelined loop
    int copies = 2;  // copies in flight (the buffer's bufs, at least lag + 1)
    int first = 0;   // program-order position of the loop's first instruction
  };
  std::map<int, Rotated> rotated_;
  std::vector<int> order_;  // instruction -> its position in program order
  std::vector<int> rider_;  // instruction -> the instruction riding on it (fused), or -1
  std::string out_;
};

Emitter::Emitter(const Program& p, const std::vector<NkiParam>& params, NkiApi api,
                 const NkiShapes* shapes)
    : p_(p),
      param_specs_(params),
      api_(api),
      shapes_(shapes),
      buf_name_(p.buffers.size()),
      var_(p.blocks.size()),
      inst_block_(p.insts.size(), 0),
      depth_of_(p.blocks.size(), 0) {
  for (const auto& param : params) params_.push_back(param.name);
  const auto& param_names = params_;
  validate(p);
  for (const char* k :
       {"False",   "None",     "True",     "and",    "as",   "assert", "async",  "await",
        "break",   "class",    "continue", "def",    "del",  "elif",   "else",   "except",
        "finally", "for",      "from",     "global", "if",   "import", "in",     "is",
        "lambda",  "nonlocal", "not",      "or",     "pass", "raise",  "return", "try",
        "while",   "with",     "yield",    "nki",    "nl",   "nisa",   "float",  "range"})
    used_.insert(k);
  for (const auto& b : p.buffers)
    TS_CHECK(b.param < static_cast<int>(param_names.size()),
             "buffer {} holds parameter {}, but {} names were given", b.name, b.param,
             param_names.size());
  for (const auto& n : param_names) used_.insert(n);
  if (shapes_)
    for (const auto& [name, source] : shapes_->defs) used_.insert(name);
  if (shapes_ && !shapes_->partial.empty() && !current())
    for (const char* v : {"i_p", "i_f", "i_f2", "i_f3"}) index_var_.push_back(unique(v));
  for (std::size_t b = 0; b < p.blocks.size(); ++b) {
    if (b > 0) depth_of_[b] = depth_of_[p.blocks[b].parent] + 1;
    if (b > 0)
      var_[b] = unique(p.blocks[b].var.empty() ? "i" + std::to_string(b) : p.blocks[b].var);
    for (const auto& item : p.blocks[b].items)
      if (item.inst >= 0) inst_block_[item.inst] = static_cast<int>(b);
  }
  find_rotated();
  rider_.assign(p.insts.size(), -1);
  for (std::size_t i = 0; i < p.insts.size(); ++i)
    if (p.insts[i].rides >= 0)
      rider_[static_cast<std::size_t>(p.insts[i].rides)] = static_cast<int>(i);
  for (std::size_t b = 0; b < p.buffers.size(); ++b)
    buf_name_[b] =
        p.buffers[b].param >= 0 ? params_[p.buffers[b].param] : unique(p.buffers[b].name);
  for (const auto& in : p.insts)
    if (!in.dma && in.out >= 0 && !in.in.empty() && transposes(in.spec->op))
      transposed_psum_[in.out] = p.buffers[in.in[0]].dtype;
  place_buffers();
}

// A Python identifier from `base`, distinct from every name handed out before.
std::string Emitter::unique(const std::string& base) {
  std::string s;
  for (char c : base) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "t_" + s;
  std::string name = s;
  for (int n = 1; used_.count(name); ++n) name = s + "_" + std::to_string(n);
  used_.insert(name);
  return name;
}

// Each on-chip buffer is declared in the innermost block enclosing all its uses; a PSUM tile
// accumulated across a loop also encloses that loop's parent, where it is zeroed.
void Emitter::place_buffers() {
  std::vector<int> at(p_.buffers.size(), -1);
  auto meet = [&](int buf, int b) {
    int& a = at[buf];
    if (a < 0) {
      a = b;
      return;
    }
    while (depth_of_[a] > depth_of_[b]) a = p_.blocks[a].parent;
    while (depth_of_[b] > depth_of_[a]) b = p_.blocks[b].parent;
    while (a != b) a = p_.blocks[a].parent, b = p_.blocks[b].parent;
  };
  for (std::size_t i = 0; i < p_.insts.size(); ++i) {
    const Inst& in = p_.insts[i];
    for (int b : in.in) meet(b, inst_block_[i]);
    if (in.out >= 0) meet(in.out, inst_block_[i]);
    if (in.accumulate_block >= 0 && in.out >= 0) {
      TS_CHECK(in.accumulate_block > 0, "instruction {} accumulates across the top level", i);
      meet(in.out, p_.blocks[in.accumulate_block].parent);
      zero_before_[in.accumulate_block].insert(in.out);
    }
  }
  for (std::size_t b = 0; b < p_.buffers.size(); ++b)
    if (p_.buffers[b].memory != sem::Memory::Hbm)
      declare_at_[std::max(at[b], 0)].push_back(static_cast<int>(b));
}

// The tiles software-pipelined loops hand over (Inst::in_lag > 0). pipeline_loop leaves
// `A(0); for i < n - 1: { A(i + 1); B(i) }; B(n - 1)`: inside the loop A writes (and reads) the
// copy of version i + 1 and B reads version i (lag 1); before the loop the prologue's A(0) holds
// version 0, after it the epilogue's B(n - 1) reads version n - 1. The loop is found as the
// deepest loop enclosing a lagged read and a write of the tile (the prologue's write sits
// outside it).
void Emitter::find_rotated() {
  order_.assign(p_.insts.size(), 0);
  int next = 0;
  std::function<void(int)> walk = [&](int b) {
    for (const auto& item : p_.blocks[b].items)
      if (item.inst >= 0)
        order_[item.inst] = next++;
      else
        walk(item.block);
  };
  walk(0);
  auto meet = [&](int a, int b) {
    while (depth_of_[a] > depth_of_[b]) a = p_.blocks[a].parent;
    while (depth_of_[b] > depth_of_[a]) b = p_.blocks[b].parent;
    while (a != b) a = p_.blocks[a].parent, b = p_.blocks[b].parent;
    return a;
  };
  for (std::size_t r = 0; r < p_.insts.size(); ++r) {
    const Inst& reader = p_.insts[r];
    for (std::size_t j = 0; j < reader.in.size(); ++j) {
      const int lag = reader.lag(j), x = reader.in[j];
      if (lag <= 0) continue;
      const Buffer& buf = p_.buffers[x];
      if (lag > 1)
        throw UserError(fmt::format(
            "{} reads the copy of '{}' written {} iterations earlier; the NKI emitter prints "
            "software-pipelined loops one stage deep (a lag of 1) only",
            reader.spec->op.name, buf.name, lag));
      TS_CHECK(buf.memory != sem::Memory::Hbm, "a lagged read of HBM tensor {}", buf.name);
      int loop = -1;
      for (std::size_t w = 0; w < p_.insts.size(); ++w)
        if (p_.insts[w].out == x) {
          int m = meet(inst_block_[r], inst_block_[w]);
          if (loop < 0 || depth_of_[m] > depth_of_[loop]) loop = m;
        }
      TS_CHECK(loop > 0, "{} reads an earlier iteration's copy of {}, which no loop writes",
               reader.spec->op.name, buf.name);
      auto [it, fresh] = rotated_.try_emplace(x);
      TS_CHECK(fresh || it->second.loop == loop, "{} is handed over by two pipelined loops",
               buf.name);
      it->second.loop = loop;
      it->second.copies = std::max({buf.bufs, buf.min_bufs, lag + 1});
    }
  }
  for (auto& [x, r] : rotated_) {
    r.first = next;
    for (std::size_t i = 0; i < p_.insts.size(); ++i) {
      int b = inst_block_[i];
      while (b > 0 && b != r.loop) b = p_.blocks[b].parent;
      if (b == r.loop) r.first = std::min(r.first, order_[i]);
    }
  }
}

// The index of the copy instruction `inst` reads (at `lag`) or writes of a rotated tile (see
// find_rotated); empty for any other tile.
std::string Emitter::slot(int inst, int buf, int lag) const {
  auto it = rotated_.find(buf);
  if (it == rotated_.end()) return "";
  const Rotated& r = it->second;
  int b = inst_block_[inst];
  while (b > 0 && b != r.loop) b = p_.blocks[b].parent;
  if (b == r.loop)
    return lag > 0 ? fmt::format("{} % {}", var_[r.loop], r.copies)
                   : fmt::format("({} + 1) % {}", var_[r.loop], r.copies);
  if (order_[inst] < r.first) return "0";
  const std::string n = trips_text(r.loop);  // the epilogue: version n - 1, the loop's trips
  bool constant = !n.empty() && std::all_of(n.begin(), n.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c));
  });
  return constant ? std::to_string(std::stoll(n) % r.copies)
                  : fmt::format("({}) % {}", n, r.copies);
}

// Loop `b`'s trip count as printed: a generic expression, or the number.
std::string Emitter::trips_text(int b) const {
  if (shapes_)
    if (auto t = shapes_->trips.find(b); t != shapes_->trips.end()) return t->second;
  return std::to_string(p_.blocks[b].trips);
}

// Imports, the signature and the shape asserts.
void Emitter::header(const std::string& name) {
  out_ = current() ? "import nki\nimport nki.language as nl\nimport nki.isa as nisa\n\n\n"
                   : "import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\nimport "
                     "neuronxcc.nki.isa as nisa\n\n\n";
  // Defaults only where every later parameter has one too (Python's rule).
  std::vector<std::string> sig(params_.size());
  bool defaults = true;
  for (std::size_t i = params_.size(); i-- > 0;) {
    const NkiParam& q = param_specs_[i];
    defaults = defaults && q.scalar && q.default_value;
    sig[i] = defaults ? fmt::format("{}={}", q.name, py_float(*q.default_value)) : q.name;
  }
  line(0, "@nki.jit");
  line(0, fmt::format("def {}({}):", name, fmt::join(sig, ", ")));
  if (!p_.config.empty()) line(1, "# " + p_.config);
  if (shapes_) {
    shape_asserts();
    return;
  }
  for (std::size_t b = 0; b < p_.buffers.size(); ++b) {
    const Buffer& buf = p_.buffers[b];
    if (buf.param < 0 || buf.alias >= 0 || param_specs_[buf.param].scalar) continue;
    std::string shape = py_tuple(buf.shape);
    line(1, fmt::format("assert tuple({}.shape) == {}, \"{}: this kernel is built for shape {}\"",
                        buf_name_[b], shape, buf_name_[b], shape));
  }
}

// Generic in some dims: they are read from the arguments' shapes, every argument's shape is
// asserted in terms of them, and so is what the trip counts need (divisibility, at least one).
void Emitter::shape_asserts() {
  line(1, fmt::format("# generic dims: {}", fmt::join(shapes_->generic, ", ")));
  for (const auto& f : shapes_->fixed) line(1, "# fixed " + f);
  if (!shapes_->partial_dims.empty())
    line(1, fmt::format("# partial last tiles: {}", fmt::join(shapes_->partial_dims, ", ")));
  std::set<std::string> zeroed;
  for (const auto& [b, loop] : shapes_->partial)
    if (loop.zero_fill) zeroed.insert(loop.dim);
  if (!zeroed.empty())
    line(1, fmt::format("# zero-filled partial tiles (summed over): {}", fmt::join(zeroed, ", ")));
  for (const auto& [name, source] : shapes_->defs) line(1, fmt::format("{} = {}", name, source));
  for (std::size_t b = 0; b < p_.buffers.size(); ++b) {
    const Buffer& buf = p_.buffers[b];
    if (buf.param < 0 || buf.alias >= 0 || param_specs_[buf.param].scalar) continue;
    std::string shape = hbm_shape(static_cast<int>(b));
    line(1, fmt::format("assert tuple({}.shape) == {}, \"{}: this kernel takes shape {}\"",
                        buf_name_[b], shape, buf_name_[b], shape));
  }
  for (const auto& c : shapes_->asserts)
    line(1, fmt::format("assert {}, \"this kernel's tiles need {}\"", c, c));
}

// An HBM tensor's shape as a Python tuple: generic sizes as their expressions.
std::string Emitter::hbm_shape(int buf) const {
  const Buffer& x = p_.buffers[buf];
  auto it = shapes_ ? shapes_->hbm_shape.find(buf)
                    : std::map<int, std::vector<std::string>>::const_iterator{};
  if (!shapes_ || it == shapes_->hbm_shape.end()) return py_tuple(x.shape);
  std::vector<std::string> dims;
  for (std::size_t d = 0; d < x.shape.size(); ++d)
    dims.push_back(it->second[d].empty() ? std::to_string(x.shape[d]) : it->second[d]);
  return dims.size() == 1 ? "(" + dims[0] + ",)" : fmt::format("({})", fmt::join(dims, ", "));
}

std::string Emitter::run() {
  std::string name = p_.kernel.empty() ? "kernel" : p_.kernel;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  if (std::isdigit(static_cast<unsigned char>(name[0]))) name = "k_" + name;
  header(name);
  std::map<int, std::string> outputs;
  for (std::size_t b = 0; b < p_.buffers.size(); ++b) {
    const Buffer& buf = p_.buffers[b];
    if (buf.memory != sem::Memory::Hbm || buf.param >= 0 || buf.alias >= 0) continue;
    line(1, fmt::format("{} = nl.ndarray({}, dtype={}, buffer={})", buf_name_[b],
                        hbm_shape(static_cast<int>(b)), nki_dtype(buf.dtype),
                        buf.output >= 0 ? "nl.shared_hbm" : "nl.hbm"));
  }
  for (std::size_t b = 0; b < p_.buffers.size(); ++b)
    if (p_.buffers[b].output >= 0) outputs[p_.buffers[b].output] = buf_name_[b];
  for (std::size_t b = 0; b < p_.buffers.size(); ++b) declare_alias(static_cast<int>(b));
  block(0, 1);
  std::vector<std::string> names;
  for (const auto& [k, v] : outputs) names.push_back(v);
  if (!names.empty()) line(1, fmt::format("return {}", fmt::join(names, ", ")));
  return out_;
}

// PSUM tiles hold fp32 whatever the program's dtype (PSUM accumulates in fp32; nc_matmul's dst
// must be fp32 on NeuronCore-v2/v3); the instruction that reads one out casts. A transpose's
// output keeps its input's dtype (nc_transpose: "dst must have the same data type as data").
std::string Emitter::buffer_dtype(int buf) const {
  const Buffer& x = p_.buffers[buf];
  if (x.memory != sem::Memory::Psum) return nki_dtype(x.dtype);
  auto t = transposed_psum_.find(buf);
  return t == transposed_psum_.end() ? "nl.float32" : nki_dtype(t->second);
}

// An HBM alias is a reshaped view of its root, declared once the root has a name.
void Emitter::declare_alias(int b) {
  const Buffer& buf = p_.buffers[b];
  if (buf.alias < 0 || buf.param >= 0 || aliased_.count(b)) return;
  declare_alias(buf.alias);
  aliased_.insert(b);
  line(1, fmt::format("{} = {}.reshape({})", buf_name_[b], buf_name_[buf.alias], hbm_shape(b)));
}

void Emitter::block(int b, int depth) {
  std::size_t before = out_.size();
  if (auto it = declare_at_.find(b); it != declare_at_.end())
    for (int buf : it->second) {
      const Buffer& x = p_.buffers[buf];
      std::vector<std::int64_t> shape = x.shape;
      auto r = rotated_.find(buf);
      if (r != rotated_.end()) shape.insert(shape.begin() + 1, r->second.copies);
      std::string s = fmt::format("{} = nl.ndarray({}, dtype={}, buffer={})", buf_name_[buf],
                                  py_tuple(shape), buffer_dtype(buf), nki_memory(x.memory));
      if (r != rotated_.end())
        s += fmt::format("  # {} copies, one per iteration of '{}' in flight (pipelined)",
                         r->second.copies, var_[r->second.loop]);
      else if (x.bufs > 1)
        s += fmt::format("  # {} buffers", x.bufs);
      line(depth, s);
    }
  for (const auto& item : p_.blocks[b].items) {
    if (item.inst >= 0) {
      inst(item.inst, depth);
      continue;
    }
    const Block& c = p_.blocks[item.block];
    if (auto it = zero_before_.find(item.block); it != zero_before_.end())
      for (int buf : it->second) zero(buf, depth);
    // Legacy: a loop that carries a dependency (an accumulation, a pipelined loop's hand-over)
    // is a sequential_range.
    bool carries = zero_before_.count(item.block) > 0 ||
                   std::any_of(rotated_.begin(), rotated_.end(),
                               [&](const auto& r) { return r.second.loop == item.block; });
    const char* range = current() ? "range" : carries ? "nl.sequential_range" : "nl.affine_range";
    std::string trips = trips_text(item.block);
    line(depth, fmt::format("for {} in {}({}):", var_[item.block], range, trips));
    if (!c.guard) {
      block(item.block, depth + 1);
      continue;
    }
    // A guarded loop (Block::guard: a causal mask's fully masked key tiles skipped): the current
    // dialect's loops run at trace time over Python integers, so the guard is a Python `if` on
    // the loop variables (the legacy dialect is refused by refuse_guards).
    line(depth + 1, fmt::format("if {} >= 0:", affine(c.guard->terms, c.guard->offset)));
    block(item.block, depth + 2);
  }
  if (out_.size() == before) line(depth, "pass");
}

// A tile zeroed (an accumulator before its loop, a zero-filled partial tile before its load):
// nl.zeros (legacy), memset on the Vector Engine (current; GpSimd cannot reach PSUM).
void Emitter::zero(int buf, int depth, const std::string& slot) {
  const Buffer& x = p_.buffers[buf];
  std::string dst = tile_expr(buf, nullptr, slot);
  if (current())
    line(depth, fmt::format("nisa.memset(dst={}, value=0.0, engine=nisa.engine.vector)", dst));
  else
    line(depth,
         fmt::format("{}{} = nl.zeros({}, dtype={}, buffer={})", dst, slot.empty() ? "[...]" : "",
                     py_tuple(x.shape), buffer_dtype(buf), nki_memory(x.memory)));
}

// `text` (one statement a line), the comment on its last line.
void Emitter::lines(int depth, const std::string& text, const std::string& comment) {
  std::size_t start = 0;
  while (true) {
    std::size_t end = text.find('\n', start);
    std::string l = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (end == std::string::npos) {
      line(depth, comment.empty() ? l : l + "  # " + comment);
      return;
    }
    line(depth, l);
    start = end + 1;
  }
}

// A fresh fp32 SBUF tile of `shape`, declared at `depth`.
std::string Emitter::scratch(int depth, const std::vector<std::int64_t>& shape) {
  std::string name = unique("scratch");
  line(depth,
       fmt::format("{} = nl.ndarray({}, dtype=nl.float32, buffer=nl.sbuf)", name, py_tuple(shape)));
  return name;
}

// `terms` (+ `offset`) as a Python expression over the loop variables.
std::string Emitter::affine(const Terms& terms, std::int64_t offset) const {
  std::vector<std::string> parts;
  for (const auto& [blk, step] : terms)
    if (step != 0) parts.push_back(step == 1 ? var_[blk] : fmt::format("{} * {}", var_[blk], step));
  if (offset != 0 || parts.empty()) parts.push_back(std::to_string(offset));
  return fmt::format("{}", fmt::join(parts, " + "));
}

// `start : start + extent` (strided: `start : start + extent * stride : stride`), folded when
// the start is a constant.
std::string Emitter::slice(const Terms& terms, std::int64_t offset, std::int64_t extent,
                           std::int64_t stride) const {
  bool constant = true;
  for (const auto& t : terms) constant = constant && t.second == 0;
  std::string start = affine(terms, offset);
  std::int64_t span = (extent - 1) * stride + 1;
  std::string end = constant ? std::to_string(offset + span) : fmt::format("{} + {}", start, span);
  return stride == 1 ? fmt::format("{} : {}", start, end)
                     : fmt::format("{} : {} : {}", start, end, stride);
}

// An on-chip operand: the buffer, or its window of columns (at its loop terms plus its offset:
// a running reduction's tile partial sits at column 1 of its [rows, 2] buffer); of a rotated
// tile, the copy at `slot` (the index after the partition dim).
std::string Emitter::tile_expr(int buf, const Window* w, const std::string& slot) const {
  if ((!w || w->whole()) && slot.empty()) return buf_name_[buf];
  std::vector<std::string> index(p_.buffers[buf].shape.size(), ":");
  if (w && !w->whole()) index.back() = slice(w->terms, w->offset, w->width, w->step);
  if (!slot.empty()) index.insert(index.begin() + 1, slot);
  return fmt::format("{}[{}]", buf_name_[buf], fmt::join(index, ", "));
}

// The HBM side of a DMA, sliced by its access and viewed in the orientation of the
// instruction's HBM operand: `.T` where the access and the instruction disagree, a reshape
// where buffer dims merge into one tile dim or the tile has broadcast dims.
HbmView Emitter::hbm_view(const Inst& in, const std::vector<std::int64_t>& tile) const {
  const Access& a = in.hbm;
  const Buffer& buf = p_.buffers[a.buffer];
  std::vector<std::string> index;
  std::vector<int> fed;
  std::vector<std::int64_t> merged(tile.size(), 1);
  std::vector<int> feeds(tile.size(), 0);
  for (std::size_t d = 0; d < buf.shape.size(); ++d) {
    std::int64_t offset = a.offset.empty() ? 0 : a.offset[d];
    bool moves = offset != 0;
    for (const auto& t : a.terms[d]) moves = moves || t.second != 0;
    int td = a.tile_dim[d];
    if (td < 0)
      index.push_back(affine(a.terms[d], offset));
    else if (!moves && a.step(d) == 1 && a.extent[d] == buf.shape[d])
      index.push_back(":");
    else
      index.push_back(slice(a.terms[d], offset, a.extent[d], a.step(d)));
    if (td < 0) continue;
    TS_CHECK(td < static_cast<int>(tile.size()), "DMA into {}: tile dim {} of a rank-{} tile",
             buf.name, td, tile.size());
    if (fed.empty() || fed.back() != td) fed.push_back(td);
    merged[td] *= a.extent[d];
    ++feeds[td];
  }
  std::string s = buf_name_[a.buffer];
  if (!index.empty()) s += fmt::format("[{}]", fmt::join(index, ", "));
  bool access_transposes = false, reshape = fed.size() < tile.size();
  for (std::size_t j = 1; j < fed.size(); ++j)
    access_transposes = access_transposes || fed[j] < fed[j - 1];
  for (int f : feeds) reshape = reshape || f > 1;
  TS_CHECK(!access_transposes || (fed.size() == 2 && !reshape),
           "DMA into {}: only 2-d transposes are emitted", buf.name);
  if (reshape) s += fmt::format(".reshape({})", py_tuple(merged));
  // Broadcast dims: legacy tensor.broadcast_to(shape); the current NkiTensor view repeats one
  // size-1 dim at a time (.broadcast(dim, size)).
  if (merged != tile && !current()) s += fmt::format(".broadcast_to({})", py_tuple(tile));
  for (std::size_t d = 0; d < tile.size() && merged != tile && current(); ++d)
    if (merged[d] != tile[d]) s += fmt::format(".broadcast({}, {})", d, tile[d]);
  return {s, access_transposes != transposes(in.spec->op)};
}

std::string Emitter::attr(const Inst& in, const std::string& name) const {
  const sem::AttrSpec* spec = in.spec->op.attr(name);
  auto it = in.attrs.find(name);
  TS_CHECK(it != in.attrs.end() || spec->default_value, "{} has no value for attribute '{}'",
           in.spec->op.name, name);
  const sem::AttrValue& v = it != in.attrs.end() ? it->second : *spec->default_value;
  if (const auto* s = std::get_if<std::string>(&v)) {
    if (spec->type != sem::AttrType::Name) return fmt::format("'{}'", *s);
    auto n = in.spec->nki_names.find(*s);
    TS_CHECK(n != in.spec->nki_names.end(), "{}: '{}' has no NKI spelling", in.spec->op.name, *s);
    return n->second;
  }
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "True" : "False";
  if (const auto* i = std::get_if<std::int64_t>(&v); i && name == in.moving_attr)
    return affine(in.moving, *i);  // a mask's offset: the tile's position in loop variables
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (const auto* f = std::get_if<double>(&v))
    return spec->type == sem::AttrType::Float ? py_float(*f) : fmt::format("{}", *f);
  if (const auto* d = std::get_if<sem::Dim>(&v)) return py_dim(*d);
  std::vector<std::string> dims;
  for (const auto& d : std::get<std::vector<sem::Dim>>(v)) dims.push_back(py_dim(d));
  return dims.size() == 1 ? "(" + dims[0] + ",)" : fmt::format("({})", fmt::join(dims, ", "));
}

// DMAs with a documented form other than their template: a scalar parameter's load is a memset
// of the Python number; a load read transposed is dma_transpose (current) / load_transpose2d
// (legacy); a dma_transpose whose access transposes back is a plain dma_copy. True when done.
bool Emitter::special_dma(int i, int depth) {
  const Inst& in = p_.insts[i];
  if (!in.dma) return false;
  const Buffer& hbm = p_.buffers[in.hbm.buffer];
  if (!in.store && hbm.param >= 0 && param_specs_[hbm.param].scalar) {
    const std::string& v = params_[hbm.param];
    std::string at = slot(i, in.out, 0);
    std::string dst = tile_expr(in.out, &in.out_window, at);
    const Buffer& t = p_.buffers[in.out];
    lines(depth,
          current() ? fmt::format("nisa.memset(dst={}, value={})", dst, v)
                    : fmt::format("{}{} = nisa.memset(shape={}, value={}, dtype={})", dst,
                                  in.out_window.whole() && at.empty() ? "[...]" : "",
                                  py_tuple(t.shape), v, buffer_dtype(in.out)),
          in.note);
    return true;
  }
  auto shape_of = [&](int buf, const Window* w) {
    std::vector<std::int64_t> sh = p_.buffers[buf].shape;
    if (w && !w->whole()) sh.back() = w->width;
    return sh;
  };
  const Window* w = in.store ? (in.in_window.empty() ? nullptr : &in.in_window[0]) : &in.out_window;
  int tile = in.store ? in.in[0] : in.out;
  HbmView view = hbm_view(in, shape_of(tile, w));
  if (!view.transposed) return false;
  std::string at = slot(i, tile, in.store ? in.lag(0) : 0);
  std::string t = tile_expr(tile, w, at);
  if (transposes(in.spec->op)) {  // both transpose: the data arrives as it is stored
    lines(depth,
          in.store ? fmt::format("nisa.dma_copy(dst={}, src={})", view.text, t)
                   : fmt::format("nisa.dma_copy(dst={}, src={})", t, view.text),
          in.note);
    return true;
  }
  if (in.store)
    throw UserError(fmt::format(
        "a store to '{}' that transposes has no documented NKI form (dma_transpose writes SBUF "
        "only); this candidate cannot be emitted",
        hbm.name));
  lines(depth,
        current() ? fmt::format("nisa.dma_transpose(dst={}, src={})", t, view.text)
                  : fmt::format("{}{} = nl.load_transpose2d({})", t,
                                (w && !w->whole()) || !at.empty() ? "" : "[...]", view.text),
        in.note);
  return true;
}

// Legacy partial tiles: one nl.arange index per tile dim, each along its own axis.
std::vector<std::string> Emitter::arange_indices(int depth,
                                                 const std::vector<std::int64_t>& shape) {
  TS_CHECK(shape.size() <= index_var_.size(), "a rank-{} tile with a partial last tile",
           shape.size());
  std::vector<std::string> vars;
  for (std::size_t t = 0; t < shape.size(); ++t) {
    std::vector<std::string> axes(shape.size(), "None");
    axes[t] = ":";
    std::string at = shape.size() == 1 ? "" : fmt::format("[{}]", fmt::join(axes, ", "));
    line(depth, fmt::format("{} = nl.arange({}){}", index_var_[t], shape[t], at));
    vars.push_back(index_var_[t]);
  }
  return vars;
}

// A DMA along a loop that may end on a partial tile (NkiShapes::partial) moves only the part
// inside the tensor. Current API: slices cut short with min() (the migration guide's
// "Deprecation of masking"); legacy: tile and tensor indexed with nl.arange and a mask= on the
// call (the programming model's masks). nki_partial_tiles.cpp made sure the access is a plain
// tile (one tensor dim per tile dim, in order). A load along a zero-filled loop zeroes its
// whole tile first (PartialLoop::zero_fill). True when done.
bool Emitter::partial_dma(int i, int depth) {
  const Inst& in = p_.insts[i];
  if (!in.dma || !shapes_ || shapes_->partial.empty()) return false;
  const Access& a = in.hbm;
  std::vector<const PartialLoop*> cut(a.terms.size(), nullptr);
  bool any = false, zero_fill = false;
  for (std::size_t d = 0; d < a.terms.size(); ++d)
    for (const auto& [blk, step] : a.terms[d])
      if (auto it = shapes_->partial.find(blk); step != 0 && it != shapes_->partial.end())
        cut[d] = &it->second, any = true, zero_fill = zero_fill || it->second.zero_fill;
  if (!any) return false;
  int tile = in.store ? in.in[0] : in.out;
  const Window whole{};
  const Window& w = !in.store ? in.out_window : in.in_window.empty() ? whole : in.in_window[0];
  // Its lanes past the end are summed over. A load into a window is never what a sum reads
  // (nki_partial_tiles.cpp), and zeroing its buffer would clear the other windows.
  std::string at = slot(i, tile, in.store ? in.lag(0) : 0);
  if (zero_fill && !in.store && w.whole()) zero(tile, depth, at);
  std::vector<std::int64_t> shape = p_.buffers[tile].shape;
  if (!w.whole()) shape.back() = w.width;
  std::vector<std::string> vars =
      current() ? std::vector<std::string>{} : arange_indices(depth, shape);
  std::vector<std::string> hbm, on_chip(shape.size(), ":"), mask;
  if (!w.whole()) on_chip.back() = slice(w.terms, w.offset, w.width, 1);
  for (std::size_t d = 0; d < a.terms.size(); ++d) {
    std::string start = affine(a.terms[d], a.offset.empty() ? 0 : a.offset[d]);
    int td = a.tile_dim[d];
    if (td < 0) {
      hbm.push_back(start);
      continue;
    }
    std::int64_t n = a.extent[d], step = a.step(d);
    if (current()) {
      if (cut[d]) {
        hbm.push_back(fmt::format("{} : min({}, {} + {})", start, cut[d]->dim, start, n));
        on_chip[td] = fmt::format("0 : min({}, {} - {})", n, cut[d]->dim, start);
      } else {
        bool whole = start == "0" && step == 1 && n == p_.buffers[a.buffer].shape[d];
        hbm.push_back(whole ? ":" : slice(a.terms[d], a.offset.empty() ? 0 : a.offset[d], n, step));
      }
      continue;
    }
    std::string at = step == 1 ? vars[td] : fmt::format("{} * {}", vars[td], step);
    hbm.push_back(start == "0" ? at : fmt::format("{} + {}", start, at));
    if (cut[d]) mask.push_back(fmt::format("({} + {} < {})", start, vars[td], cut[d]->dim));
  }
  if (!current())
    for (std::size_t t = 0; t < shape.size(); ++t)
      on_chip[t] = t + 1 == shape.size() && !w.whole()
                       ? fmt::format("{} + {}", affine(w.terms, w.offset), vars[t])
                       : vars[t];
  if (!at.empty()) on_chip.insert(on_chip.begin() + 1, at);
  std::string view = fmt::format("{}[{}]", buf_name_[a.buffer], fmt::join(hbm, ", "));
  std::string t = fmt::format("{}[{}]", buf_name_[tile], fmt::join(on_chip, ", "));
  std::string call = in.store ? fmt::format("nisa.dma_copy(dst={}, src={}", view, t)
                              : fmt::format("nisa.dma_copy(dst={}, src={}", t, view);
  if (!mask.empty()) call += fmt::format(", mask={}", fmt::join(mask, " & "));
  lines(depth, call + ")", in.note + (in.note.empty() ? "" : " ") + "(partial last tile)");
  return true;
}

// A stride-0 access dim (np.repeat: Access::repeat, Window::repeat) has no form in this emitter
// yet (the current API's NkiTensor.expand_dim / broadcast / flatten_dims or .ap() could express
// the aligned cases): the candidate is refused, naming the instruction and the tensor.
void Emitter::refuse_repeats(const Inst& in) const {
  auto refuse = [&](const std::string& what) {
    throw UserError(fmt::format(
        "{} ({}) reads {} with a repeated (stride-0) access dim, which the NKI emitter has no "
        "form for yet; this candidate cannot be emitted (its tile spans several elements of a "
        "'repeat'; tiles of at most the repeat count have a form)",
        in.note.empty() ? in.spec->op.name : in.note, in.spec->op.name, what));
  };
  if (in.dma && in.hbm.repeats_any()) refuse(p_.buffers[in.hbm.buffer].name);
  for (std::size_t j = 0; j < in.in_window.size() && j < in.in.size(); ++j)
    if (in.in_window[j].repeat > 1) refuse(p_.buffers[in.in[j]].name);
}

void Emitter::inst(int i, int depth) {
  if (p_.insts[i].rides >= 0) return;  // printed as part of its carrier's fused call
  // A carrier (reduction_fusion.h) is printed as its fused instruction: the reduction's tile is
  // its output, its own tile the element-wise result ({scratch}; a legacy call's value).
  const int rider = rider_[i];
  const Inst fused = rider >= 0 ? fused_instruction(p_, rider) : Inst{};
  const Inst& in = rider >= 0 ? fused : p_.insts[i];
  const std::string elementwise =
      rider >= 0 ? tile_expr(p_.insts[i].out, &p_.insts[i].out_window, slot(i, p_.insts[i].out, 0))
                 : "";
  const sem::InstrSpec& spec = *in.spec;
  const sem::OpSpec& op = spec.op;
  const std::string& tmpl = current() ? spec.nki_current : spec.nki;
  if (tmpl.empty())
    throw UserError(fmt::format(
        "instruction '{}' has no `{}` template to emit it with (add `{} = \"...\"` to "
        "its [instr.{}] table in the target's isa.toml)",
        op.name, current() ? "nki_current" : "nki", current() ? "nki_current" : "nki", op.name));
  refuse_repeats(in);
  if (special_dma(i, depth) || partial_dma(i, depth)) return;
  // What each operand and the output are in the kernel, and the pattern dims at these tiles
  // (windows included).
  auto window = [&](std::size_t j) { return j < in.in_window.size() ? &in.in_window[j] : nullptr; };
  auto shape_of = [&](int buf, const Window* w) {
    std::vector<std::int64_t> s = p_.buffers[buf].shape;
    if (w && !w->whole()) s.back() = w->width;
    return s;
  };
  std::vector<std::string> operand;
  for (std::size_t j = 0; j < in.in.size(); ++j)
    operand.push_back(tile_expr(in.in[j], window(j), slot(i, in.in[j], in.lag(j))));
  std::string out_slot = in.out >= 0 ? slot(i, in.out, 0) : "";
  std::string out = in.out >= 0 ? tile_expr(in.out, &in.out_window, out_slot) : "";
  if (in.dma && in.store) out = hbm_view(in, shape_of(in.in[0], window(0))).text;
  if (in.dma && !in.store) operand.push_back(hbm_view(in, shape_of(in.out, &in.out_window)).text);
  TS_CHECK(operand.size() == op.operands.size(), "instruction {} has {} operands, {} takes {}", i,
           operand.size(), op.name, op.operands.size());
  std::map<std::string, std::int64_t> dims;
  auto bind = [&](const sem::Pattern& pat, const std::vector<std::int64_t>& shape) {
    if (pat.items.size() != shape.size()) return;
    for (std::size_t j = 0; j < shape.size(); ++j)
      if (!pat.items[j].group && !pat.items[j].name.empty())
        dims.emplace(pat.items[j].name, shape[j]);
  };
  if (in.dma)
    bind(op.out, in.store ? shape_of(in.in[0], window(0)) : shape_of(in.out, &in.out_window));
  else
    bind(op.out, shape_of(in.out, &in.out_window));
  for (std::size_t j = 0; j < in.in.size() && !in.dma; ++j)
    bind(op.shapes[j], shape_of(in.in[j], window(j)));
  int out_buf = in.dma && in.store ? in.hbm.buffer : in.out;
  // Divides become multiplications by a reciprocal: a name attribute spelled nl.divide pairs
  // with its right operand (opN with operandN, op with the second operand).
  std::map<std::string, std::string> over;  // attribute / operand -> replacement text
  for (const auto& a : op.attrs) {
    auto it = in.attrs.find(a.name);
    const auto* v = it == in.attrs.end() ? nullptr : std::get_if<std::string>(&it->second);
    if (a.type != sem::AttrType::Name || !v || *v != "div") continue;
    std::string pair = a.name == "op" ? (op.operands.size() > 1 ? op.operands[1] : "")
                                      : "operand" + a.name.substr(2);
    over[a.name] = "nl.multiply";
    if (int k = op.operand_index(pair); k >= 0) {
      std::string r = scratch(depth, shape_of(in.in[k], window(k)));
      line(depth, current() ? fmt::format("nisa.reciprocal(dst={}, data={})", r, operand[k])
                            : fmt::format("{}[...] = nisa.reciprocal({})", r, operand[k]));
      over[pair] = r;
    } else if (auto f = in.attrs.find(pair);
               f != in.attrs.end() && std::get_if<double>(&f->second)) {
      over[pair] = py_float(1.0 / std::get<double>(f->second));
    } else {
      throw UserError(
          fmt::format("{}: a divide whose divisor '{}' is neither an operand nor a constant has no "
                      "documented NKI form",
                      op.name, pair));
    }
  }
  // An unused second ALU operator is None (tensor_scalar: "op1 and operand1 must be None when
  // unused").
  auto identity = [&]() {
    auto o = in.attrs.find("op1");
    auto v = in.attrs.find("operand1");
    const sem::AttrSpec* so = op.attr("op1");
    const sem::AttrSpec* sv = op.attr("operand1");
    if (!so || !sv || sv->type != sem::AttrType::Float || over.count("op1")) return false;
    const sem::AttrValue& ov = o != in.attrs.end() ? o->second : *so->default_value;
    const sem::AttrValue& vv = v != in.attrs.end() ? v->second : *sv->default_value;
    const auto* os = std::get_if<std::string>(&ov);
    const auto* vd = std::get_if<double>(&vv);
    return os && vd &&
           ((*os == "add" && *vd == 0.0) || (*os == "sub" && *vd == 0.0) ||
            (*os == "mul" && *vd == 1.0));
  };
  bool unused_op1 = op.attr("op1") && op.attr("operand1") && identity();
  bool accumulates = in.accumulate_block >= 0;
  bool via_scratch = current() && accumulates && tmpl.find("{accumulate}") == std::string::npos;
  std::string dst = via_scratch ? scratch(depth, shape_of(in.out, &in.out_window)) : out;
  bool statement = false;
  auto value = [&](const std::string& key) -> std::string {
    if (key == "out") {
      statement = true;
      return dst;
    }
    if (auto o = over.find(key); o != over.end()) return o->second;
    if (unused_op1 && (key == "op1" || key == "operand1")) return "None";
    if (key == "accumulate") return accumulates ? "True" : "False";
    if (key == "scratch")
      return rider >= 0 ? elementwise : scratch(depth, shape_of(in.in[0], window(0)));
    if (int k = op.operand_index(key); k >= 0) return operand[k];
    if (op.attr(key)) return attr(in, key);
    if (key == "engine")
      return spec.nki_names.at((current() ? "current:" : "") +
                               std::string(sem::engine_name(in.engine)));
    if (key == "dtype")
      return in.dma ? nki_dtype(p_.buffers[out_buf].dtype) : buffer_dtype(out_buf);
    auto d = dims.find(key);
    TS_CHECK(d != dims.end(), "instruction {} ({}): no size for pattern dim '{}'", i, op.name, key);
    return std::to_string(d->second);
  };
  std::string error;
  std::string call = sem::expand_nki(tmpl, value, &error);
  TS_CHECK(error.empty(), "{}: {}", op.name, error);
  std::string target = in.out_window.whole() && out_slot.empty() ? out + "[...]" : out;
  std::string text =
      statement ? call : fmt::format("{} {} {}", target, accumulates ? "+=" : "=", call);
  if (rider >= 0 && !current()) {  // the legacy call returns the element-wise result
    const Inst& a = p_.insts[i];
    text = fmt::format("{}{} = {}", elementwise,
                       a.out_window.whole() && slot(i, a.out, 0).empty() ? "[...]" : "", call);
  }
  if (via_scratch)
    text +=
        fmt::format("\nnisa.tensor_tensor(dst={}, data1={}, data2={}, op=nl.add)", out, out, dst);
  std::string comment = in.note;
  if (rider >= 0) comment += std::string(comment.empty() ? "" : " ") + "(fused)";
  if (in.repeat > 1)
    comment += fmt::format("{}(issued as {} copies)", comment.empty() ? "" : " ", in.repeat);
  lines(depth, text, comment);
}

}  // namespace

NkiApi parse_nki_api(const std::string& text, const std::string& flag) {
  if (text == "current") return NkiApi::Current;
  if (text == "legacy") return NkiApi::Legacy;
  throw UserError(fmt::format(
      "error: {}: '{}' is not an NKI dialect (expected current — the nki package of Neuron "
      "SDK 2.27+ — or legacy — neuronxcc.nki of SDK 2.26 and before)",
      flag, text));
}

const char* nki_api_name(NkiApi api) { return api == NkiApi::Current ? "current" : "legacy"; }

std::vector<NkiParam> nki_params(const ir::Kernel& k) {
  std::vector<NkiParam> out;
  for (const auto& p : k.params) out.push_back({p.name, p.scalar, p.default_value});
  return out;
}

namespace {

// A loop with skipped iterations (Block::guard, a causal mask's fully masked tiles) in the
// legacy dialect: its loop variables are nl.affine_range / nl.sequential_range iterators, not
// Python integers, and its loop bounds are constants, so neither an `if` on the loop variables
// nor a trip count from an outer index has a form; refused rather than emitted computing every
// tile (the current dialect emits the guard as an `if`).
void refuse_guards(const Program& p, NkiApi api) {
  if (api == NkiApi::Current) return;
  for (const auto& b : p.blocks)
    if (b.guard)
      throw UserError(fmt::format(
          "loop '{}' skips the tiles a mask covers entirely (a triangular nest), which has no "
          "form in the legacy NKI dialect (its loop variables are not Python integers); emit "
          "it with --nki-api current",
          b.var));
}

}  // namespace

std::string emit_nki(const Program& p, const std::vector<NkiParam>& params, NkiApi api,
                     const NkiShapes* shapes) {
  refuse_guards(p, api);
  return Emitter(p, params, api, shapes).run();
}

std::string emit_nki(const Program& p, const std::vector<std::string>& param_names, NkiApi api) {
  refuse_guards(p, api);
  std::vector<NkiParam> params;
  for (const auto& n : param_names) params.push_back({n, false, std::nullopt});
  return Emitter(p, params, api, nullptr).run();
}

}  // namespace ts::lower
