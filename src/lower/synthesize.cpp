#include "tilesweep/lower/synthesize.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <set>
#include <sstream>

#include "tilesweep/ir/graph_edit.h"
#include "tilesweep/ir/graph_printer.h"
#include "tilesweep/ir/interpreter.h"

namespace ts::lower {

namespace {

void expr_constituents(const sem::Expr& e, const sem::OpSpec& op, std::set<std::string>& out);

void op_constituents(const sem::OpSpec& op, std::set<std::string>& out) {
  expr_constituents(*op.expr, op, out);
}

void expr_constituents(const sem::Expr& e, const sem::OpSpec& op, std::set<std::string>& out) {
  static const char* reducers[] = {"sum", "prod", "max", "min"};
  switch (e.kind) {
    case sem::Expr::Binary:
      if (e.op == sem::BinOp::Add || e.op == sem::BinOp::Sub) out.insert("add");
      if (e.op == sem::BinOp::Mul) out.insert("mul");
      if (e.op == sem::BinOp::Div) out.insert("div");
      break;
    case sem::Expr::Reduce:
      out.insert(reducers[static_cast<int>(e.reducer)]);
      break;
    case sem::Expr::Call:
      if (e.name == "apply" || e.name == "reduce") {
        // Any of the attribute's choices may be picked.
        if (!e.args.empty() && e.args[0]->kind == sem::Expr::Name)
          if (const sem::AttrSpec* a = op.attr(e.args[0]->name))
            for (const auto& c : a->choices) {
              if (e.name == "reduce")
                out.insert(c == "add" ? "sum" : c == "mul" ? "prod" : c);
              else if (const sem::OpSpec* f = sem::OpTable::builtin().find(c))
                op_constituents(*f, out);
            }
      } else if (e.name != "size") {
        out.insert(e.name);  // (a select: what a mask's where is made of)
      }
      break;
    default:
      break;
  }
  for (const auto& a : e.args) expr_constituents(*a, op, out);
}

// A decimal v = digits * 10^exp10, from the shortest text that prints a double (as the encoder
// reads a literal); nullopt where it does not fit 18 digits.
struct Decimal {
  __int128 digits = 0;
  int exp10 = 0;
};

std::optional<Decimal> decimal_of(double v) {
  std::string s = fmt::format("{}", v);
  Decimal d;
  bool negative = !s.empty() && s[0] == '-';
  if (negative) s = s.substr(1);
  if (auto e = s.find_first_of("eE"); e != std::string::npos) {
    d.exp10 = std::atoi(s.c_str() + e + 1);
    s = s.substr(0, e);
  }
  if (auto dot = s.find('.'); dot != std::string::npos) {
    d.exp10 -= static_cast<int>(s.size() - dot - 1);
    s.erase(dot, 1);
  }
  if (s.empty() || s.size() > 18 || s.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  d.digits = std::stoll(s) * (negative ? -1 : 1);
  return d;
}

// 1 - v for a literal v in (0, 1) (a decay rate, a momentum: `x - c * x` is `x * (1 - c)`) where
// the double 1 - v prints as exactly the decimal 1 - v, so a proof over the printed literals holds.
std::optional<double> exact_complement(double v) {
  if (!(v > 0.0 && v < 1.0)) return std::nullopt;
  auto a = decimal_of(v), b = decimal_of(1.0 - v);
  if (!a || !b || a->exp10 < -18 || b->exp10 < -18 || a->exp10 > 0 || b->exp10 > 0)
    return std::nullopt;
  int e = std::min(a->exp10, b->exp10);  // both sides scaled by 10^-e
  auto scale = [](__int128 x, int k) {
    for (int i = 0; i < k; ++i) x *= 10;
    return x;
  };
  __int128 one = scale(1, -e);
  if (one - scale(a->digits, a->exp10 - e) != scale(b->digits, b->exp10 - e)) return std::nullopt;
  return 1.0 - v;
}

class Synthesizer {
 public:
  Synthesizer(const ir::Kernel& op, const sem::InstrTable& isa, const SynthesisOptions& o,
              verify::VerdictCache* c)
      : op_(ir::compact(op)), isa_(isa), opts_(o), cache_(c) {
    for (const auto& n : op_.nodes)
      if (n.op == "const" && n.inputs.empty())
        if (auto it = n.attrs.find("value"); it != n.attrs.end())
          if (const double* v = std::get_if<double>(&it->second))
            if (std::find(literals_.begin(), literals_.end(), *v) == literals_.end())
              literals_.push_back(*v);
    for (std::size_t i = 0, n = literals_.size(); i < n; ++i)
      if (auto c = exact_complement(literals_[i]))
        if (std::find(literals_.begin(), literals_.end(), *c) == literals_.end())
          literals_.push_back(*c);
    for (const auto& n : op_.nodes)
      if (n.op == "dim" && n.inputs.empty())
        if (const auto* d = std::get_if<sem::Dim>(&n.attrs.at("value")))
          if (!d->is_const()) positions_.push_back(*d);
  }

  SynthesisResult run() {
    TS_CHECK(op_.outputs.size() == 1, "synthesis needs a one-output op kernel");
    target_ = op_.nodes[op_.outputs[0]].shape;
    // What every op of the kernel computes (a fusion's two ops, a transpose over a matmul).
    std::set<std::string> want;
    for (const auto& n : op_.nodes)
      if (n.param < 0)
        for (auto& c : constituents(n.body)) want.insert(std::move(c));
    // No ISA has a divide ALU operator (the targets' [legality]): a / b is a * (1 / b), the
    // reciprocal from an instruction that computes one, the product from one that multiplies.
    if (want.count("div")) want.insert("mul");
    for (const auto& name : isa_.names()) {
      const sem::InstrSpec* in = isa_.find(name);
      if (in->op.operands.empty()) continue;  // memset, iota: no inputs to transform
      std::set<std::string> have;
      op_constituents(in->op, have);
      // A recurrence (a product along a range: the scans) serves only ops that sum or multiply
      // along a range; elsewhere the scan from a start would stand in for arithmetic (a start
      // times a factor of -1 as a negation) and crowd out the instructions made for it.
      if (have.count("prod") && !want.count("prod") && !want.count("sum")) continue;
      bool shares = have.empty();  // pure data movement (copies, transposes)
      for (const auto& c : have) shares = shares || want.count(c);
      if (shares) pool_.push_back(in);
    }
    // Instructions sharing the most constituents with the op first: they are the likeliest
    // final steps, and budgets stop the search in this order.
    auto overlap = [&](const sem::InstrSpec* in) {
      std::set<std::string> have;
      op_constituents(in->op, have);
      int n = 0;
      for (const auto& c : have) n += want.count(c) ? 1 : 0;
      return n;
    };
    std::stable_sort(pool_.begin(), pool_.end(),
                     [&](auto* a, auto* b) { return overlap(a) > overlap(b); });
    // A division's first step is likeliest the reciprocal of its divisor (then a product ends
    // it): the divisors that are the op's parameters.
    for (const auto& n : op_.nodes)
      if (n.op == "div" && n.inputs.size() == 2 && op_.nodes[n.inputs[1]].param >= 0)
        divisors_.push_back(n.inputs[1]);
    if (want.count("div"))
      for (const auto* in : pool_) {
        std::set<std::string> have;
        op_constituents(in->op, have);
        if (have.count("div")) reciprocals_.push_back(in);
      }
    for (const auto* in : pool_) result_.pool.push_back(in->op.name);
    ir::Kernel base = leaves();
    leaves_size_ = base.nodes.size();
    for (int depth = 1; depth <= opts_.max_depth && !stopped(); ++depth) {
      max_depth_ = depth;
      seen_.clear();
      extend(base, 1, -1);
      if (!result_.lowerings.empty() && !opts_.all_depths) break;
    }
    std::stable_sort(result_.lowerings.begin(), result_.lowerings.end(),
                     [](const Lowering& a, const Lowering& b) {
                       return a.depth != b.depth ? a.depth < b.depth : a.text < b.text;
                     });
    return std::move(result_);
  }

  // The result `record` describes, rebuilt step by step from the leaves (no search, no proof).
  SynthesisResult replay(const std::string& record) {
    std::istringstream in(record);
    SynthesisResult r;
    int stop = 0;
    std::size_t pool = 0, lowerings = 0;
    in >> stop >> r.candidates >> r.filtered >> r.proved >> r.refuted >> r.unknown >> r.steps >>
        r.proof_ms >> pool;
    TS_CHECK(stop >= 0 && stop <= static_cast<int>(SynthesisStop::StepLimit), "bad stop in '{}'",
             record);
    r.stop = static_cast<SynthesisStop>(stop);
    r.pool.resize(pool);
    for (auto& name : r.pool) in >> name;
    in >> lowerings;
    TS_CHECK(in && lowerings < 100000, "synthesis record header unreadable: '{}'", record);
    const ir::Kernel base = leaves();
    for (std::size_t l = 0; l < lowerings; ++l) {
      Lowering low;
      int kind = 0;
      std::size_t steps = 0;
      in >> low.depth >> kind >> low.proof.ms >> steps;
      low.proof.kind = static_cast<verify::VerdictKind>(kind);
      low.proof.cached = true;
      ir::Kernel k = base;
      int id = -1;
      for (std::size_t s = 0; in && s < steps; ++s) {
        SketchStep step;
        std::size_t inputs = 0;
        in >> step.instr >> inputs;
        step.inputs.resize(std::min<std::size_t>(inputs, 16));
        for (int& i : step.inputs) in >> i;
        in >> step.attrs;
        const sem::InstrSpec* spec = isa_.find(step.instr);
        TS_CHECK(in && spec && inputs <= 16,
                 "synthesis record names no instruction of this ISA: '{}'", record);
        std::vector<sem::AttrMap> fillings = attr_choices(*spec);
        TS_CHECK(step.attrs >= 0 && step.attrs < static_cast<int>(fillings.size()),
                 "bad attribute filling in '{}'", record);
        for (int i : step.inputs)
          TS_CHECK(i >= 0 && i < static_cast<int>(k.nodes.size()), "bad input in '{}'", record);
        id = ir::add_op(k, spec->op, step.inputs, fillings[static_cast<std::size_t>(step.attrs)],
                        {});
        low.steps.push_back(std::move(step));
      }
      TS_CHECK(in && id >= 0, "synthesis record unreadable: '{}'", record);
      k.outputs = {id};
      low.program = ir::compact(k);
      low.text = ir::expression_text(low.program);
      r.lowerings.push_back(std::move(low));
    }
    return r;
  }

 private:
  bool stopped() {
    if (result_.candidates >= opts_.max_candidates) result_.stop = SynthesisStop::CandidateLimit;
    if (++polls_ > static_cast<std::uint64_t>(opts_.max_steps))
      result_.stop = SynthesisStop::StepLimit;
    result_.steps = static_cast<std::int64_t>(polls_);
    return result_.stop != SynthesisStop::Exhausted;
  }

  // The op's parameters plus constant tiles that instructions may take as immediate operands:
  // per-partition zeros, ones and minus ones (a bias of 0, a scale of 1, a negation), each tile
  // size as a per-partition value (a mean's divisor) and its reciprocal (1 / F: no ISA divides, a
  // mean multiplies by it; the materializer folds it into the constant), and a full tile of ones (a
  // scan's multiplier).
  ir::Kernel leaves() {
    ir::Kernel k = op_;
    k.nodes.resize(k.params.size());
    k.outputs.clear();
    const sem::OpTable& ops = sem::OpTable::builtin();
    auto broadcast = [&](int c, std::vector<sem::Dim> shape) {
      k.nodes[c].weak = true;
      ir::add_op(k, *ops.find("broadcast_to"), {c}, {{"shape", std::move(shape)}}, {});
    };
    std::set<std::string> done;
    for (const auto& p : op_.params) {
      if (p.shape.size() != 2) continue;
      if (done.insert(p.shape[0].str()).second) {
        for (double v : {0.0, 1.0, -1.0})
          broadcast(ir::add_op(k, *ops.find("const"), {}, {{"value", v}}, {}),
                    {p.shape[0], sem::Dim(1)});
        // The literals of a region's kernel (region.h), as per-partition values: a bias or a
        // scale tile folded into one instruction.
        for (double v : literals_)
          if (v != 0.0 && v != 1.0 && v != -1.0)
            broadcast(ir::add_op(k, *ops.find("const"), {}, {{"value", v}}, {}),
                      {p.shape[0], sem::Dim(1)});
        for (const auto& d : op_.dims) {
          broadcast(ir::add_op(k, *ops.find("dim"), {}, {{"value", sem::Dim::symbol(d)}}, {}),
                    {p.shape[0], sem::Dim(1)});
          int size = ir::add_op(k, *ops.find("dim"), {}, {{"value", sem::Dim::symbol(d)}}, {});
          k.nodes[size].weak = true;
          broadcast(ir::add_op(k, *ops.find("reciprocal"), {size}, {}, {}),
                    {p.shape[0], sem::Dim(1)});
        }
      }
      if (done.insert(sem::format_shape(p.shape)).second)
        broadcast(ir::add_op(k, *ops.find("const"), {}, {{"value", 1.0}}, {}), p.shape);
    }
    return k;
  }

  std::vector<sem::AttrMap> attr_choices(const sem::InstrSpec& in) {
    std::vector<sem::AttrMap> out(1);
    for (const auto& a : in.op.attrs) {
      std::vector<sem::AttrValue> values;
      if (a.type == sem::AttrType::Name) {
        for (const auto& c : a.choices) values.push_back(c);
      } else if (a.type == sem::AttrType::Float && !literals_.empty()) {
        // An immediate (activation's scale, tensor_scalar's operand1, a mask's fill): the
        // default or one of the op's literals (a constant folded into the instruction).
        if (a.default_value) values.push_back(*a.default_value);
        for (double v : literals_) values.emplace_back(std::in_place_type<double>, v);
      } else if (a.type == sem::AttrType::Dim && !positions_.empty()) {
        values = offsets();  // an affine instruction's offset (affine_select's)
      } else if (a.type == sem::AttrType::Int && !positions_.empty() && !a.default_value) {
        for (std::int64_t m : {-1, 0, 1})  // an index's multiplier
          values.emplace_back(std::in_place_type<std::int64_t>, m);
      } else if (a.default_value || a.default_reversed) {
        continue;  // the default
      } else if (a.type == sem::AttrType::Float) {
        values.push_back(1.0);
      } else if (a.type == sem::AttrType::Bool) {
        values.push_back(false);
      } else {
        return {};  // an attribute the search cannot fill
      }
      std::vector<sem::AttrMap> next;
      for (const auto& m : out)
        for (const auto& v : values) {
          sem::AttrMap m2 = m;
          m2[a.name] = v;
          next.push_back(std::move(m2));
        }
      out = std::move(next);
    }
    return out;
  }

  // The offsets an affine instruction may add to its index expression, for an op over a tile's
  // positions (index_source.h): 0, each position origin the op reads (the tile's row or column
  // origin), negated, the differences of two; each shifted by an integer literal of the op (or
  // none), either sign, and by -1, 0 or 1 (a strict comparison of integers is a >= one).
  std::vector<sem::AttrValue> offsets() const {
    std::vector<sem::Dim> base = {sem::Dim(0)};
    for (const auto& a : positions_) {
      base.push_back(a);
      base.push_back(-a);
      for (const auto& b : positions_)
        if (!(a == b)) base.push_back(a - b);
    }
    std::vector<std::int64_t> shifts = {0};
    for (double v : literals_)
      if (std::isfinite(v) && v == std::round(v) && v != 0 && std::fabs(v) < 1e9)
        for (double s : {v, -v}) shifts.push_back(static_cast<std::int64_t>(s));
    std::vector<sem::AttrValue> out;
    std::set<std::string> seen;
    for (const auto& b : base)
      for (std::int64_t c : shifts)
        for (std::int64_t d : {0, -1, 1}) {
          sem::Dim o = b + sem::Dim(c + d);
          if (seen.insert(o.str()).second) out.push_back(o);
        }
    return out;
  }

  // Adds one instruction; from depth 2 on it must consume the previous instruction's result,
  // so that sketches are chains ending in the output (independent prefixes are never needed
  // twice).
  // `k` grows by one node per step and is restored before each returns (no copy per step).
  void extend(ir::Kernel& k, int depth, int last) {
    int n = static_cast<int>(k.nodes.size());
    // The final step is likeliest an instruction sharing the op's constituents; earlier steps
    // are likeliest data movement (transposes, copies): order each accordingly.
    std::vector<const sem::InstrSpec*> order = pool_;
    // (In a single pass the first instruction does the work: it is ordered like a final one.)
    if (depth < max_depth_ && !opts_.single_pass) {
      std::reverse(order.begin(), order.end());
      std::stable_partition(order.begin(), order.end(), [&](const sem::InstrSpec* in) {
        return std::find(reciprocals_.begin(), reciprocals_.end(), in) != reciprocals_.end();
      });
    }
    // The operands a step may read: all nodes, or in a row prefix's steps before the last
    // the per-row values only (the last one reads the tile, and the step before it).
    std::vector<int> nodes;
    for (int x = 0; x < n; ++x)
      if (!opts_.row_prefix || depth == max_depth_ || per_row(k.nodes[x].shape)) nodes.push_back(x);
    const bool prefix_last = opts_.row_prefix && depth == max_depth_ && depth > 1;
    for (const sem::InstrSpec* in : order) {
      // A division lowered through a reciprocal: the other first steps are not searched.
      if (depth == 1 && max_depth_ > 1 && !result_.lowerings.empty() &&
          std::find(reciprocals_.begin(), reciprocals_.end(), in) == reciprocals_.end() &&
          !reciprocals_.empty())
        return;
      int slots = static_cast<int>(in->op.operands.size());
      // After a divisor's reciprocal, the product of two tiles ends it: three-operand
      // instructions (a search of cubic size) are left out.
      if (!divisors_.empty() && depth > 1 && slots > 2) continue;
      const bool reciprocal =
          std::find(reciprocals_.begin(), reciprocals_.end(), in) != reciprocals_.end();
      std::vector<sem::AttrMap> attrs = attr_choices(*in);
      std::vector<int> at(slots, 0), pick(slots, nodes.empty() ? 0 : nodes[0]);
      while (!nodes.empty()) {
        bool uses_last = last < 0;
        for (int p : pick) uses_last = uses_last || p == last;
        bool leaf_only = true;
        for (int p : pick)
          leaf_only = leaf_only && (p >= static_cast<int>(k.params.size()) && p < first_step());
        // (the data operand, first, is the divisor)
        bool divisor = depth > 1 || divisors_.empty() || !reciprocal || pick.empty() ||
                       std::count(divisors_.begin(), divisors_.end(), pick[0]) > 0;
        if (uses_last && !leaf_only && divisor && (!prefix_last || reads_tiles(k, pick)) &&
            ranks_fit(k, *in, pick))
          for (std::size_t a = 0; a < attrs.size(); ++a) {
            if (stopped()) return;
            // (a division by a parameter starts with its reciprocal; a mean's 1 / F is a leaf)
            if (!divisors_.empty() && reciprocal && depth == 1 && !divides(attrs[a])) continue;
            // Shapes do not depend on which function or ALU op is chosen: when the operands
            // do not fit, no attribute choice will.
            if (!try_instr(k, *in, pick, attrs[a], static_cast<int>(a), depth)) break;
          }
        int i = 0;
        while (i < slots && ++at[i] == static_cast<int>(nodes.size())) at[i++] = 0;
        for (int j = 0; j < slots; ++j) pick[j] = nodes[at[j]];
        if (i == slots || slots == 0) break;
      }
    }
  }

  int first_step() const { return static_cast<int>(leaves_size_); }

  // A row prefix's last instruction: the steps before it read per-row values only, so it reads
  // every full-tile parameter of the op, and no other full tile (a tile of ones only scales).
  bool reads_tiles(const ir::Kernel& k, const std::vector<int>& pick) const {
    for (int p : pick)
      if (!per_row(k.nodes[p].shape) && p >= static_cast<int>(k.params.size())) return false;
    for (std::size_t p = 0; p < k.params.size(); ++p)
      if (!per_row(k.nodes[p].shape) &&
          std::find(pick.begin(), pick.end(), static_cast<int>(p)) == pick.end())
        return false;
    return true;
  }

  // A per-partition value: [P, 1] (a row statistic, a bias or scale tile).
  static bool per_row(const std::vector<sem::Dim>& s) {
    return s.size() == 2 && s[1].is_const() && s[1].value() == 1;
  }

  // True unless an attribute names a function or operator that computes no reciprocal (an
  // activation's exp is no divisor's first step).
  static bool divides(const sem::AttrMap& attrs) {
    for (const auto& [name, v] : attrs)
      if (const auto* s = std::get_if<std::string>(&v))
        if (const sem::OpSpec* f = sem::OpTable::builtin().find(*s)) {
          std::set<std::string> have;
          op_constituents(*f, have);
          if (!have.count("div")) return false;
        }
    return true;
  }

  // A cheap necessary condition before instantiating: each operand's rank fits its pattern.
  static bool ranks_fit(const ir::Kernel& k, const sem::InstrSpec& in,
                        const std::vector<int>& inputs) {
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const auto& items = in.op.shapes[i].items;
      bool group =
          std::any_of(items.begin(), items.end(), [](const sem::Item& it) { return it.group; });
      std::size_t rank = k.nodes[inputs[i]].shape.size();
      if (group ? rank + 1 < items.size() : rank != items.size()) return false;
    }
    return true;
  }

  // False when the operands do not fit the instruction's shapes.
  bool try_instr(ir::Kernel& k, const sem::InstrSpec& in, const std::vector<int>& inputs,
                 const sem::AttrMap& attrs, int attr_index, int depth) {
    // A single pass reads the tile in its first instruction only (before the kernel is copied:
    // shapes, not attributes, decide).
    if (opts_.single_pass && depth > 1) {
      if (inputs.size() > 2) return false;
      for (int x : inputs)
        if (k.nodes[x].shape == op_.params.front().shape) return false;
    }
    // A row prefix reads full tiles in its last instruction only (the shorter sketches that end
    // in one were searched at the depth before).
    const bool reads_tile = std::any_of(inputs.begin(), inputs.end(),
                                        [&](int x) { return !per_row(k.nodes[x].shape); });
    if (opts_.row_prefix && reads_tile && depth < max_depth_) return false;
    // The step is appended to `k` (add_op appends a node and preconditions, nothing else) and
    // undone on every way out: the search copies no kernel per step.
    const std::size_t nodes = k.nodes.size(), preconditions = k.preconditions.size();
    auto undo = [&] {
      k.nodes.erase(k.nodes.begin() + static_cast<std::ptrdiff_t>(nodes), k.nodes.end());
      k.preconditions.erase(k.preconditions.begin() + static_cast<std::ptrdiff_t>(preconditions),
                            k.preconditions.end());
    };
    int id;
    try {
      id = ir::add_op(k, in.op, inputs, attrs, {});
    } catch (const UserError&) {
      undo();
      return false;
    }
    std::vector<std::uint64_t> memo;
    if (!seen_.insert(ir::node_hash(k, id, memo)).second) {
      undo();
      return true;
    }
    path_.push_back(SketchStep{in.op.name, inputs, attr_index});
    if (k.nodes[id].shape == target_) candidate(k, id, depth);
    // In a single pass a full tile left by the first instruction could not be read again.
    bool dead_end = (opts_.single_pass && k.nodes[id].shape == op_.params.front().shape) ||
                    (opts_.row_prefix && reads_tile);
    if (depth < max_depth_ && !dead_end) extend(k, depth + 1, id);
    path_.pop_back();
    undo();
    return true;
  }

  // `k` (the sketch, its outputs empty) is left as it was.
  void candidate(ir::Kernel& sketch, int id, int depth) {
    ++result_.candidates;
    sketch.outputs = {id};
    ir::Kernel k = ir::compact(sketch);
    sketch.outputs.clear();
    if (!agrees_numerically(k)) {
      ++result_.filtered;
      return;
    }
    verify::Verdict v = verify::prove_equivalent(op_, k, opts_.prove, cache_);
    result_.proof_ms += v.ms;
    if (v.kind == verify::VerdictKind::Equivalent) {
      ++result_.proved;
      result_.lowerings.push_back(Lowering{k, path_, ir::expression_text(k), depth, v});
    } else if (v.kind == verify::VerdictKind::NotEquivalent) {
      ++result_.refuted;
    } else {
      ++result_.unknown;
    }
  }

  bool agrees_numerically(const ir::Kernel& k) {
    sem::DimEnv dims;
    std::int64_t next = 3;
    for (const auto& d : op_.dims) dims[d] = next++;
    for (const auto& p : op_.preconditions)
      if (auto ok = p.holds(dims); !ok || !*ok)
        return true;         // no cheap check: let the proof decide
    if (samples_.empty()) {  // the op's inputs and outputs, the same for every candidate
      std::mt19937_64 rng(11);
      for (auto [lo, hi] : {std::pair{-1.0, 1.0}, std::pair{0.1, 1.0}}) {
        std::uniform_real_distribution<double> uni(lo, hi);
        std::vector<ir::Tensor> in;
        for (const auto& p : op_.params) {
          ir::Tensor t(ir::concrete_shape(p.shape, dims));
          for (double& x : t.data) x = uni(rng);
          in.push_back(std::move(t));
        }
        auto want = ir::evaluate(op_, dims, in, ir::Precision::F64);
        samples_.emplace_back(std::move(in), std::move(want));
      }
    }
    for (const auto& [in, want] : samples_) {
      std::vector<ir::Tensor> got;
      try {
        got = ir::evaluate(k, dims, in, ir::Precision::F64);
      } catch (const UserError&) {
        return false;  // the candidate's shapes only fit some dims (a precondition fails here)
      }
      for (std::size_t e = 0; e < want[0].data.size(); ++e) {
        double a = want[0].data[e], b = got[0].data[e];
        if (std::isfinite(a) != std::isfinite(b)) return false;
        if (std::isfinite(a) && std::fabs(a - b) > 1e-9 + 1e-9 * std::fabs(a)) return false;
      }
    }
    return true;
  }

  ir::Kernel op_;
  // The op kernel's literal constants (a region's), in node order, then their exact complements.
  std::vector<double> literals_;
  std::vector<sem::Dim> positions_;  // the tile origins a mask's tile form reads (index_source.h)
  const sem::InstrTable& isa_;
  std::vector<SketchStep> path_;  // the sketch being extended
  SynthesisOptions opts_;
  verify::VerdictCache* cache_;
  std::vector<const sem::InstrSpec*> pool_;
  // Of the pool: those computing a reciprocal (a division's first step).
  std::vector<const sem::InstrSpec*> reciprocals_;
  std::vector<int> divisors_;  // nodes of op_ (its parameters) that a division divides by
  std::vector<sem::Dim> target_;
  std::set<std::uint64_t> seen_;
  // agrees_numerically's inputs and the op's outputs on them (made at the first candidate).
  std::vector<std::pair<std::vector<ir::Tensor>, std::vector<ir::Tensor>>> samples_;
  std::size_t leaves_size_ = 0;
  int max_depth_ = 1;
  std::uint64_t polls_ = 0;
  SynthesisResult result_;
};

}  // namespace

std::vector<std::string> constituents(const sem::TermGraph& body) {
  std::set<std::string> out;
  static const char* reducers[] = {"sum", "prod", "max", "min"};
  for (const auto& n : body.nodes) {
    switch (n.op) {
      // A negation is a multiplication by -1 or a subtraction from 0.
      case sem::TermOp::Neg:
        if (!n.integer) out.insert({"mul", "add"});
        break;
      case sem::TermOp::Add:
      case sem::TermOp::Sub:
        if (!n.integer) out.insert("add");
        break;
      case sem::TermOp::Mul:
        if (!n.integer) out.insert("mul");
        break;
      case sem::TermOp::Div:
        out.insert("div");
        break;
      case sem::TermOp::Call:
        out.insert(sem::func_name(n.func));
        break;
      case sem::TermOp::Reduce:
        out.insert(reducers[static_cast<int>(n.reducer)]);
        break;
      case sem::TermOp::Select:
        out.insert("select");
        break;
      default:
        break;
    }
  }
  return {out.begin(), out.end()};
}

std::string synthesis_record(const SynthesisResult& r) {
  std::string out =
      fmt::format("{} {} {} {} {} {} {} {} {}", static_cast<int>(r.stop), r.candidates, r.filtered,
                  r.proved, r.refuted, r.unknown, r.steps, r.proof_ms, r.pool.size());
  for (const auto& name : r.pool) out += " " + name;
  out += fmt::format(" {}", r.lowerings.size());
  for (const auto& l : r.lowerings) {
    out += fmt::format(" {} {} {} {}", l.depth, static_cast<int>(l.proof.kind), l.proof.ms,
                       l.steps.size());
    for (const auto& step : l.steps) {
      out += fmt::format(" {} {}", step.instr, step.inputs.size());
      for (int i : step.inputs) out += fmt::format(" {}", i);
      out += fmt::format(" {}", step.attrs);
    }
  }
  return out;
}

SynthesisResult replay_synthesis(const ir::Kernel& op, const sem::InstrTable& isa,
                                 const std::string& record) {
  return Synthesizer(op, isa, SynthesisOptions{}, nullptr).replay(record);
}

SynthesisResult synthesize(const ir::Kernel& op, const sem::InstrTable& isa,
                           const SynthesisOptions& options, verify::VerdictCache* cache) {
  return Synthesizer(op, isa, options, cache).run();
}

}  // namespace ts::lower
