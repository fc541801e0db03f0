#include "tilesweep/lower/nki.h"

#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include "tilesweep/base/error.h"

namespace ts::lower {

namespace {

const char* nki_dtype(ir::DType t) {
  switch (t) {
    case ir::DType::F8: return "nl.float8_e4m3";
    case ir::DType::BF16: return "nl.bfloat16";
    case ir::DType::F16: return "nl.float16";
    case ir::DType::F32: return "nl.float32";
  }
  return "nl.float32";
}

const char* nki_memory(sem::Memory m) {
  switch (m) {
    case sem::Memory::Sbuf: return "nl.sbuf";
    case sem::Memory::Psum: return "nl.psum";
    case sem::Memory::Hbm: return "nl.hbm";
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

class Emitter {
 public:
  Emitter(const Program& p, const std::vector<std::string>& param_names);
  std::string run();

 private:
  std::string unique(const std::string& base);
  void place_buffers();
  void block(int b, int depth);
  void declare_alias(int b);
  void line(int depth, const std::string& text) { out_ += std::string(4 * depth, ' ') + text + "\n"; }
  void inst(int i, int depth);
  std::string affine(const Terms& terms, std::int64_t offset) const;
  std::string slice(const Terms& terms, std::int64_t offset, std::int64_t extent,
                    std::int64_t stride) const;
  std::string tile_expr(int buf, const Window* w) const;
  std::string hbm_view(const Inst& in, const std::vector<std::int64_t>& tile) const;
  std::string attr(const Inst& in, const std::string& name) const;

  const Program& p_;
  const std::vector<std::string>& params_;
  std::set<std::string> used_;
  std::vector<std::string> buf_name_, var_;
  std::vector<int> inst_block_, depth_of_;
  std::map<int, std::vector<int>> declare_at_;     // block -> on-chip buffers declared there
  std::map<int, std::set<int>> zero_before_;       // accumulate block -> PSUM buffers zeroed
  std::set<int> aliased_;                          // HBM aliases declared
  std::string out_;
};

Emitter::Emitter(const Program& p, const std::vector<std::string>& param_names)
    : p_(p), params_(param_names), buf_name_(p.buffers.size()), var_(p.blocks.size()),
      inst_block_(p.insts.size(), 0), depth_of_(p.blocks.size(), 0) {
  validate(p);
  for (const char* k : {"False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
                        "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
                        "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
                        "with", "yield", "nki", "nl", "nisa", "float"})
    used_.insert(k);
  for (const auto& b : p.buffers)
    TS_CHECK(b.param < static_cast<int>(param_names.size()), "buffer {} holds parameter {}, but {} names were given",
             b.name, b.param, param_names.size());
  for (const auto& n : param_names) used_.insert(n);
  for (std::size_t b = 0; b < p.blocks.size(); ++b) {
    if (b > 0) depth_of_[b] = depth_of_[p.blocks[b].parent] + 1;
    if (b > 0) var_[b] = unique(p.blocks[b].var.empty() ? "i" + std::to_string(b) : p.blocks[b].var);
    for (const auto& item : p.blocks[b].items)
      if (item.inst >= 0) inst_block_[item.inst] = static_cast<int>(b);
  }
  for (std::size_t b = 0; b < p.buffers.size(); ++b)
    buf_name_[b] = p.buffers[b].param >= 0 ? params_[p.buffers[b].param] : unique(p.buffers[b].name);
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
    if (p_.buffers[b].memory != sem::Memory::Hbm) declare_at_[std::max(at[b], 0)].push_back(static_cast<int>(b));
}

std::string Emitter::run() {
  out_ = "import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\nimport neuronxcc.nki.isa as nisa\n\n\n";
  std::string name = p_.kernel.empty() ? "kernel" : p_.kernel;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  if (std::isdigit(static_cast<unsigned char>(name[0]))) name = "k_" + name;
  line(0, "@nki.jit");
  line(0, fmt::format("def {}({}):", name, fmt::join(params_, ", ")));
  if (!p_.config.empty()) line(1, "# " + p_.config);
  std::map<int, std::string> outputs;
  for (std::size_t b = 0; b < p_.buffers.size(); ++b) {
    const Buffer& buf = p_.buffers[b];
    if (buf.memory != sem::Memory::Hbm || buf.param >= 0 || buf.alias >= 0) continue;
    line(1, fmt::format("{} = nl.ndarray({}, dtype={}, buffer={})", buf_name_[b], py_tuple(buf.shape),
                        nki_dtype(buf.dtype), buf.output >= 0 ? "nl.shared_hbm" : "nl.hbm"));
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

// An HBM alias is a reshaped view of its root, declared once the root has a name.
void Emitter::declare_alias(int b) {
  const Buffer& buf = p_.buffers[b];
  if (buf.alias < 0 || buf.param >= 0 || aliased_.count(b)) return;
  declare_alias(buf.alias);
  aliased_.insert(b);
  line(1, fmt::format("{} = {}.reshape({})", buf_name_[b], buf_name_[buf.alias], py_tuple(buf.shape)));
}

void Emitter::block(int b, int depth) {
  std::size_t before = out_.size();
  if (auto it = declare_at_.find(b); it != declare_at_.end())
    for (int buf : it->second) {
      const Buffer& x = p_.buffers[buf];
      std::string s = fmt::format("{} = nl.ndarray({}, dtype={}, buffer={})", buf_name_[buf], py_tuple(x.shape),
                                  nki_dtype(x.dtype), nki_memory(x.memory));
      if (x.bufs > 1) s += fmt::format("  # {} buffers", x.bufs);
      line(depth, s);
    }
  for (const auto& item : p_.blocks[b].items) {
    if (item.inst >= 0) {
      inst(item.inst, depth);
      continue;
    }
    const Block& c = p_.blocks[item.block];
    if (auto it = zero_before_.find(item.block); it != zero_before_.end())
      for (int buf : it->second) {
        const Buffer& x = p_.buffers[buf];
        line(depth, fmt::format("{}[...] = nl.zeros({}, dtype={}, buffer={})", buf_name_[buf], py_tuple(x.shape),
                                nki_dtype(x.dtype), nki_memory(x.memory)));
      }
    const char* range = zero_before_.count(item.block) ? "nl.sequential_range" : "nl.affine_range";
    line(depth, fmt::format("for {} in {}({}):", var_[item.block], range, c.trips));
    block(item.block, depth + 1);
  }
  if (out_.size() == before) line(depth, "pass");
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
std::string Emitter::slice(const Terms& terms, std::int64_t offset,
                           std::int64_t extent, std::int64_t stride) const {
  bool constant = true;
  for (const auto& t : terms) constant = constant && t.second == 0;
  std::string start = affine(terms, offset);
  std::int64_t span = (extent - 1) * stride + 1;
  std::string end = constant ? std::to_string(offset + span) : fmt::format("{} + {}", start, span);
  return stride == 1 ? fmt::format("{} : {}", start, end) : fmt::format("{} : {} : {}", start, end, stride);
}

// An on-chip operand: the buffer, or its window of columns.
std::string Emitter::tile_expr(int buf, const Window* w) const {
  if (!w || w->whole()) return buf_name_[buf];
  std::vector<std::string> index(p_.buffers[buf].shape.size() - 1, ":");
  index.push_back(slice(w->terms, 0, w->width, 1));
  return fmt::format("{}[{}]", buf_name_[buf], fmt::join(index, ", "));
}

// The HBM side of a DMA, sliced by its access and viewed in the orientation of the
// instruction's HBM operand: `.T` where the access and the instruction disagree, a reshape
// where buffer dims merge into one tile dim or the tile has broadcast dims.
std::string Emitter::hbm_view(const Inst& in, const std::vector<std::int64_t>& tile) const {
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
    if (td < 0) index.push_back(affine(a.terms[d], offset));
    else if (!moves && a.step(d) == 1 && a.extent[d] == buf.shape[d]) index.push_back(":");
    else index.push_back(slice(a.terms[d], offset, a.extent[d], a.step(d)));
    if (td < 0) continue;
    TS_CHECK(td < static_cast<int>(tile.size()), "DMA into {}: tile dim {} of a rank-{} tile", buf.name, td, tile.size());
    if (fed.empty() || fed.back() != td) fed.push_back(td);
    merged[td] *= a.extent[d];
    ++feeds[td];
  }
  std::string s = buf_name_[a.buffer];
  if (!index.empty()) s += fmt::format("[{}]", fmt::join(index, ", "));
  bool access_transposes = false, reshape = fed.size() < tile.size();
  for (std::size_t j = 1; j < fed.size(); ++j) access_transposes = access_transposes || fed[j] < fed[j - 1];
  for (int f : feeds) reshape = reshape || f > 1;
  TS_CHECK(!access_transposes || (fed.size() == 2 && !reshape), "DMA into {}: only 2-d transposes are emitted", buf.name);
  if (access_transposes != transposes(in.spec->op)) s += ".T";
  if (reshape) s += fmt::format(".reshape({})", py_tuple(merged));
  if (merged != tile) s += fmt::format(".broadcast_to({})", py_tuple(tile));
  return s;
}

std::string Emitter::attr(const Inst& in, const std::string& name) const {
  const sem::AttrSpec* spec = in.spec->op.attr(name);
  auto it = in.attrs.find(name);
  TS_CHECK(it != in.attrs.end() || spec->default_value, "{} has no value for attribute '{}'", in.spec->op.name, name);
  const sem::AttrValue& v = it != in.attrs.end() ? it->second : *spec->default_value;
  if (const auto* s = std::get_if<std::string>(&v)) {
    if (spec->type != sem::AttrType::Name) return fmt::format("'{}'", *s);
    auto n = in.spec->nki_names.find(*s);
    TS_CHECK(n != in.spec->nki_names.end(), "{}: '{}' has no NKI spelling", in.spec->op.name, *s);
    return n->second;
  }
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "True" : "False";
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (const auto* f = std::get_if<double>(&v)) return spec->type == sem::AttrType::Float ? py_float(*f) : fmt::format("{}", *f);
  if (const auto* d = std::get_if<sem::Dim>(&v)) return py_dim(*d);
  std::vector<std::string> dims;
  for (const auto& d : std::get<std::vector<sem::Dim>>(v)) dims.push_back(py_dim(d));
  return dims.size() == 1 ? "(" + dims[0] + ",)" : fmt::format("({})", fmt::join(dims, ", "));
}

void Emitter::inst(int i, int depth) {
  const Inst& in = p_.insts[i];
  const sem::InstrSpec& spec = *in.spec;
  const sem::OpSpec& op = spec.op;
  if (spec.nki.empty())
    throw UserError(fmt::format("instruction '{}' has no `nki` template to emit it with (add `nki = \"...\"` to "
                                "its [instr.{}] table in the target's isa.toml)", op.name, op.name));
  // What each operand and the output are in the kernel, and the pattern dims at these tiles
  // (windows included).
  auto window = [&](std::size_t j) { return j < in.in_window.size() ? &in.in_window[j] : nullptr; };
  auto shape_of = [&](int buf, const Window* w) {
    std::vector<std::int64_t> s = p_.buffers[buf].shape;
    if (w && !w->whole()) s.back() = w->width;
    return s;
  };
  std::vector<std::string> operand;
  for (std::size_t j = 0; j < in.in.size(); ++j) operand.push_back(tile_expr(in.in[j], window(j)));
  std::string out = in.out >= 0 ? tile_expr(in.out, &in.out_window) : "";
  if (in.dma && in.store) out = hbm_view(in, shape_of(in.in[0], window(0)));
  if (in.dma && !in.store) operand.push_back(hbm_view(in, shape_of(in.out, &in.out_window)));
  TS_CHECK(operand.size() == op.operands.size(), "instruction {} has {} operands, {} takes {}", i, operand.size(),
           op.name, op.operands.size());
  std::map<std::string, std::int64_t> dims;
  auto bind = [&](const sem::Pattern& pat, const std::vector<std::int64_t>& shape) {
    if (pat.items.size() != shape.size()) return;
    for (std::size_t j = 0; j < shape.size(); ++j)
      if (!pat.items[j].group && !pat.items[j].name.empty()) dims.emplace(pat.items[j].name, shape[j]);
  };
  if (in.dma) bind(op.out, in.store ? shape_of(in.in[0], window(0)) : shape_of(in.out, &in.out_window));
  else bind(op.out, shape_of(in.out, &in.out_window));
  for (std::size_t j = 0; j < in.in.size() && !in.dma; ++j) bind(op.shapes[j], shape_of(in.in[j], window(j)));
  int out_buf = in.dma && in.store ? in.hbm.buffer : in.out;
  bool statement = false;
  auto value = [&](const std::string& key) -> std::string {
    if (key == "out") {
      statement = true;
      return out;
    }
    if (int k = op.operand_index(key); k >= 0) return operand[k];
    if (op.attr(key)) return attr(in, key);
    if (key == "engine") return spec.nki_names.at(sem::engine_name(in.engine));
    if (key == "dtype") return nki_dtype(p_.buffers[out_buf].dtype);
    auto d = dims.find(key);
    TS_CHECK(d != dims.end(), "instruction {} ({}): no size for pattern dim '{}'", i, op.name, key);
    return std::to_string(d->second);
  };
  std::string error;
  std::string call = sem::expand_nki(spec.nki, value, &error);
  TS_CHECK(error.empty(), "{}: {}", op.name, error);
  std::string target = in.out_window.whole() ? out + "[...]" : out;
  std::string text = statement ? call : fmt::format("{} {} {}", target, in.accumulate_block >= 0 ? "+=" : "=", call);
  std::string comment = in.note;
  if (in.repeat > 1) comment += fmt::format("{}(issued as {} copies)", comment.empty() ? "" : " ", in.repeat);
  line(depth, comment.empty() ? text : text + "  # " + comment);
}

}  // namespace

std::string emit_nki(const Program& p, const std::vector<std::string>& param_names) {
  return Emitter(p, param_names).run();
}

}  // namespace ts::lower
