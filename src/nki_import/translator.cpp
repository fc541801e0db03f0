#include "translator.h"

#include <algorithm>

#include "spill.h"

namespace ts::nki {

namespace {

// Canonical module paths: both dialects' modules under one name each.
std::string canonical_module(const std::string& path) {
  static const std::map<std::string, std::string> kNames = {{"neuronxcc.nki", "nki"},
                                                            {"nki", "nki"},
                                                            {"neuronxcc.nki.language", "language"},
                                                            {"nki.language", "language"},
                                                            {"neuronxcc.nki.isa", "isa"},
                                                            {"nki.isa", "isa"},
                                                            {"neuronxcc.nki.typing", "typing"},
                                                            {"nki.typing", "typing"},
                                                            {"neuronxcc.nki.jit", "nki.jit"},
                                                            {"nki.jit", "nki.jit"},
                                                            {"numpy", "numpy"},
                                                            {"math", "math"},
                                                            {"neuronxcc", "neuronxcc"}};
  auto it = kNames.find(path);
  return it == kNames.end() ? "" : it->second;
}

constexpr int kMaxCallDepth = 32;
constexpr std::int64_t kMaxUnroll = 512;

}  // namespace

Translator::Translator(const Module& m, const target::Target& t)
    : module_(m), target_(t), builder_(std::string{}) {
  scopes_.emplace_back();
  for (const Stmt& s : m.body) {
    if (s.kind == StmtKind::Import)
      import(s);
    else if (s.kind == StmtKind::Def)
      functions_[s.name] = &s;
  }
  // Module-level constants (TILE = 128), after the imports they may use.
  for (const Stmt& s : m.body)
    if (s.kind == StmtKind::Assign) exec(s);
}

const Stmt* Translator::function(const std::string& name) const {
  auto it = functions_.find(name);
  return it == functions_.end() ? nullptr : it->second;
}

bool Translator::is_jit(const Stmt& def) {
  for (const ExprPtr& d : def.decorators) {
    const Expr* e = d->kind == ExprKind::Call ? d->items[0].get() : d.get();
    Value v = eval(std::make_shared<Expr>(*e));
    if (v.kind == Value::Kind::Module &&
        (v.s == "nki.jit" || v.s == "nki.baremetal" || v.s == "nki.benchmark"))
      return true;
  }
  return false;
}

void Translator::import(const Stmt& s) {
  std::string c = canonical_module(s.name);
  if (c.empty()) {
    // `from neuronxcc.nki import language` style: the module's parent path plus the name.
    std::size_t dot = s.name.rfind('.');
    if (dot != std::string::npos && !canonical_module(s.name.substr(0, dot)).empty())
      c = canonical_module(s.name.substr(0, dot)) + "." + s.name.substr(dot + 1);
    if (c == "nki.language" || c == "nki.isa") c = c.substr(4);
  }
  if (c.empty())
    throw UserError(
        s.loc,
        fmt::format("import of '{}': only the NKI modules (neuronxcc.nki, nki), numpy and math "
                    "are known to tilesweep",
                    s.name));
  if (s.name == "nki" || s.name.rfind("nki.", 0) == 0) new_api_ = true;
  scopes_.back()[s.alias] = Value::module(c);
}

ImportedKernel Translator::run(const Stmt& kernel, const std::vector<KernelArg>& args) {
  builder_.program().kernel = kernel.name;
  ImportedKernel out;
  scopes_.emplace_back();
  std::vector<bool> used(args.size(), false);
  for (const Param& p : kernel.params) {
    auto it = std::find_if(args.begin(), args.end(),
                           [&](const KernelArg& a) { return a.name == p.name; });
    if (it == args.end()) {
      if (!p.default_value)
        throw UserError(
            p.loc, fmt::format("kernel parameter '{}' has no value: pass --arg {}=DTYPE[D0,D1,...] "
                               "(a tensor) or --arg {}=VALUE (a scalar)",
                               p.name, p.name, p.name));
      scopes_.back()[p.name] = eval(p.default_value);
      continue;
    }
    used[static_cast<std::size_t>(it - args.begin())] = true;
    if (it->scalar) {
      scopes_.back()[p.name] = it->integer ? Value::integer(static_cast<std::int64_t>(it->value))
                                           : Value::real(it->value);
      continue;
    }
    int id = alloc(p.name, sem::Memory::Hbm, it->dtype, it->shape, 0, p.loc);
    builder_.buffer(arrays_[id].buffer).param = tensor_params_++;
    out.inputs.push_back(p.name);
    scopes_.back()[p.name] = Value::of_array(id);
  }
  for (std::size_t i = 0; i < args.size(); ++i)
    if (!used[i])
      throw UserError(fmt::format("--arg {}: kernel '{}' has no parameter of that name",
                                  args[i].name, kernel.name));
  exec_block(kernel.body);
  std::vector<Value> results;
  if (returned_)
    results =
        returned_->kind == Value::Kind::Tuple ? returned_->items : std::vector<Value>{*returned_};
  for (const Value& r : results) {
    if (r.kind == Value::Kind::None) continue;
    if (r.kind != Value::Kind::Array || arrays_[r.array].memory != sem::Memory::Hbm)
      throw UserError(kernel.loc,
                      fmt::format("kernel '{}' returns {}; return HBM tensors (nl.ndarray(..., "
                                  "buffer=nl.shared_hbm))",
                                  kernel.name, describe(r)));
    builder_.buffer(arrays_[r.array].buffer).output = static_cast<int>(out.outputs.size());
    out.outputs.push_back(arrays_[r.array].name);
  }
  contract_arrays();
  // What to spill is judged with every tile single-buffered (an array that does not fit even
  // then must leave SBUF); the tiles get their multi-buffering back when it fits without the
  // spilled arrays.
  lower::Program& p = builder_.program();
  std::vector<int> bufs;
  for (const lower::Buffer& b : p.buffers) bufs.push_back(b.bufs);
  single_buffer_if_over();
  spill_over_capacity(p, target_);
  std::vector<int> spilled_bufs;
  for (const lower::Buffer& b : p.buffers) spilled_bufs.push_back(b.bufs);
  for (std::size_t b = 0; b < bufs.size(); ++b)
    if (p.buffers[b].memory != sem::Memory::Hbm) p.buffers[b].bufs = bufs[b];
  if (!fits_on_chip(p))
    for (std::size_t b = 0; b < p.buffers.size(); ++b) p.buffers[b].bufs = spilled_bufs[b];
  out.program = std::move(builder_).build();
  return out;
}

bool Translator::fits_on_chip(const lower::Program& p) const {
  lower::OnChipUse use = lower::on_chip_use(p, target_.psum.bank_bytes);
  return use.sbuf_bytes <= target_.sbuf.usable_bytes_per_partition &&
         use.psum_banks <= target_.psum.banks;
}

// Multi-buffered tiles that do not fit: the allocator halves their buffers (4 -> 2 -> 1), per
// memory, until they do.
void Translator::single_buffer_if_over() {
  lower::Program& p = builder_.program();
  for (;;) {
    lower::OnChipUse use = lower::on_chip_use(p, target_.psum.bank_bytes);
    bool sbuf = use.sbuf_bytes > target_.sbuf.usable_bytes_per_partition;
    bool psum = use.psum_banks > target_.psum.banks;
    bool halved = false;
    for (lower::Buffer& b : p.buffers)
      if (b.bufs > 1 &&
          ((sbuf && b.memory == sem::Memory::Sbuf) || (psum && b.memory == sem::Memory::Psum)))
        b.bufs /= 2, halved = true;
    if (!halved) return;
  }
}

void Translator::exec_block(const Block& b) {
  for (const Stmt& s : b) {
    if (returned_) return;
    exec(s);
  }
}

void Translator::exec(const Stmt& s) {
  switch (s.kind) {
    case StmtKind::Expr:
      eval(s.value);
      return;
    case StmtKind::Assign:
      for (const ExprPtr& t : s.targets) assign(t, s.value, s.loc);
      return;
    case StmtKind::AugAssign:
      aug_assign(s);
      return;
    case StmtKind::For:
      for_loop(s);
      return;
    case StmtKind::If: {
      Value c = eval(s.value);
      exec_block(truth(c, s.value->loc) ? s.body : s.orelse);
      return;
    }
    case StmtKind::Return:
      returned_ = s.value ? eval(s.value) : Value::none();
      return;
    case StmtKind::Assert: {
      Value c = eval(s.value);
      if (c.is_number() && !truth(c, s.loc))
        throw UserError(
            s.loc, "shape error: this assertion of the kernel fails at the given --arg shapes");
      return;
    }
    case StmtKind::Pass:
      return;
    case StmtKind::Import:
      import(s);
      return;
    case StmtKind::Def:
      functions_[s.name] = &s;
      return;
  }
}

void Translator::assign(const ExprPtr& target, const ExprPtr& value, const SourceLoc& loc) {
  if (target->kind == ExprKind::Subscript) {
    Value dst = eval(target);
    Value v = eval_into(value, &dst, false);
    (void)v;
    return;
  }
  bind(target, eval(value));
  (void)loc;
}

void Translator::bind(const ExprPtr& target, const Value& v) {
  if (target->kind == ExprKind::Name) {
    scopes_.back()[target->text] = v;
    return;
  }
  if (target->kind == ExprKind::Tuple || target->kind == ExprKind::List) {
    if (v.kind != Value::Kind::Tuple || v.items.size() != target->items.size())
      throw UserError(target->loc, fmt::format("cannot unpack {} into {} names", describe(v),
                                               target->items.size()));
    for (std::size_t i = 0; i < v.items.size(); ++i) bind(target->items[i], v.items[i]);
    return;
  }
  if (target->kind == ExprKind::Subscript) {
    Value dst = eval(target);
    copy_into(v, &dst, std::nullopt, target->loc);
    return;
  }
  throw UserError(
      target->loc,
      "unsupported assignment target (assign to a name, a tuple of names or a subscript)");
}

// `x += y`: integers add; a PSUM tile accumulates the instruction computing y (nc_matmul's
// accumulate); an SBUF tile gets a Vector add of y.
void Translator::aug_assign(const Stmt& s) {
  const ExprPtr& target = s.targets[0];
  Value cur = eval(target);
  if (!cur.tensor()) {
    std::string op = s.op.substr(0, s.op.size() - 1);
    auto e = std::make_shared<Expr>();
    e->kind = ExprKind::Binary;
    e->loc = s.loc;
    e->text = op;
    e->items = {target, s.value};
    bind(target, eval(e));
    return;
  }
  if (s.op != "+=")
    throw UserError(s.loc,
                    fmt::format("'{}' on a tile is not supported (only += accumulates)", s.op));
  const Array& a = arrays_[cur.array];
  if (a.memory == sem::Memory::Psum) {
    eval_into(s.value, &cur, true);
    return;
  }
  if (a.memory == sem::Memory::Hbm)
    throw UserError(s.loc, "+= into an HBM tensor is not supported; load, add, store");
  Value y = eval(s.value);
  elementwise("add", cur, y, &cur, std::nullopt, false, s.loc);
}

void Translator::for_loop(const Stmt& s) {
  Value r = eval(s.value);
  if (r.kind != Value::Kind::Range)
    throw UserError(s.value->loc,
                    fmt::format("for loops run over nl.affine_range / nl.sequential_range / "
                                "nl.static_range / range, not over {}",
                                describe(r)));
  if (r.trips <= 0) return;
  if (r.s == "static_range" || r.trips == 1) return unroll(s, r, 0, r.trips);
  if (interleavable(s, r)) return interleave(s, r);
  std::optional<NeedConcrete> need = loop(s, r, r.trips);
  if (!need) return;
  // A mask that cuts the tile in some iterations: most often the last one only. Peel it.
  if (!loop(s, r, r.trips - 1)) return unroll(s, r, r.trips - 1, r.trips);
  if (r.trips > kMaxUnroll)
    throw UserError(
        need->loc,
        fmt::format("{} in some iterations of a loop of {} trips only; tilesweep unrolls such "
                    "loops up to {} trips (peel the iterations into their own statements)",
                    need->what, r.trips, kMaxUnroll));
  unroll(s, r, 0, r.trips);
}

// The loop as a program block of `trips` iterations; when its body needs the loop variable
// known (NeedConcrete for this block), everything it built is rolled back and the need returned.
std::optional<NeedConcrete> Translator::loop(const Stmt& s, const Value& r, std::int64_t trips) {
  if (trips <= 0) return std::nullopt;
  lower::Program saved = builder_.program();
  std::size_t arrays = arrays_.size();
  auto scopes = scopes_;
  auto constants = constants_;
  auto sites = site_buffers_;
  int outer = block_, nest = nest_, nests = nests_;
  int blk =
      builder_.loop(block_, s.targets[0]->kind == ExprKind::Name ? s.targets[0]->text : "i", trips);
  sequential_[blk] = r.s == "sequential_range";
  if (outer == 0) nest_ = ++nests_;
  Affine var = r.a;
  var.terms.push_back({blk, r.step});
  bind(s.targets[0], Value::integer(var));
  block_ = blk;
  try {
    exec_block(s.body);
  } catch (const NeedConcrete& need) {
    if (need.block != blk) throw;
    builder_.program() = std::move(saved);
    arrays_.resize(arrays);
    scopes_ = std::move(scopes);
    constants_ = std::move(constants);
    site_buffers_ = std::move(sites);
    block_ = outer, nest_ = nest, nests_ = nests;
    return need;
  }
  block_ = outer;
  nest_ = nest;
  return std::nullopt;
}

// Iterations [from, to) translated with the loop variable known (nested loops stay loops). Their
// tiles reuse the buffers the same allocation made before (the compiler reuses the storage);
// top-level iterations are separate nests, so their tiles share the memory.
void Translator::unroll(const Stmt& s, const Value& r, std::int64_t from, std::int64_t to) {
  int nest = nest_;
  ++reuse_;
  for (std::int64_t k = from; k < to && !returned_; ++k) {
    if (block_ == 0) nest_ = ++nests_;
    bind(s.targets[0], Value::integer(r.a + Affine{k * r.step, {}}));
    exec_block(s.body);
  }
  --reuse_;
  nest_ = nest;
}

Value Translator::call_function(const Stmt& def, const Expr& call) {
  if (++call_depth_ > kMaxCallDepth)
    throw UserError(call.loc, fmt::format("calls nested more than {} deep", kMaxCallDepth));
  std::vector<std::string> names;
  for (const Param& p : def.params) names.push_back(p.name);
  Args a = bind_args(call, names, false);
  std::map<std::string, Value> frame;
  for (const Param& p : def.params) {
    auto it = a.find(p.name);
    if (it != a.end())
      frame[p.name] = it->second;
    else if (p.default_value)
      frame[p.name] = eval(p.default_value);
    else
      throw UserError(call.loc, fmt::format("{}() needs its argument '{}'", def.name, p.name));
  }
  scopes_.push_back(std::move(frame));
  exec_block(def.body);
  Value r = returned_ ? *returned_ : Value::none();
  returned_.reset();
  scopes_.pop_back();
  --call_depth_;
  return r;
}

}  // namespace ts::nki
