#include "tilesweep/semantics/instantiate.h"

#include <gtest/gtest.h>

namespace ts::sem {
namespace {

// "M,K" -> [M, K]; "" -> []; integers become constants.
std::vector<Dim> shape(const std::string& s) {
  std::vector<Dim> out;
  std::size_t p = 0;
  while (p < s.size()) {
    std::size_t q = s.find(',', p);
    std::string part = s.substr(p, q == std::string::npos ? std::string::npos : q - p);
    out.push_back(std::isdigit(static_cast<unsigned char>(part[0])) ? Dim(std::stoll(part))
                                                                    : Dim::symbol(part));
    if (q == std::string::npos) break;
    p = q + 1;
  }
  return out;
}

struct Case {
  const char* op;
  std::vector<const char*> operands;
  AttrMap attrs;
  const char* expect;  // the output shape, or "error: <substring>"
};

std::string run(const Case& c) {
  std::vector<std::vector<Dim>> shapes;
  for (const char* s : c.operands) shapes.push_back(shape(s));
  try {
    OpInstance inst =
        instantiate(*OpTable::builtin().find(c.op), shapes, c.attrs, SourceLoc{"t.py", 1, 1});
    return format_shape(inst.shape);
  } catch (const UserError& e) {
    return std::string("error: ") + e.message();
  }
}

TEST(Instantiate, ShapeInference) {
  const std::vector<Case> cases = {
      {"add", {"M,N", "M,N"}, {}, "[M, N]"},
      {"add", {"M,N", "N"}, {}, "[M, N]"},
      {"add", {"M,1", "1,N"}, {}, "[M, N]"},
      {"add", {"", "M,N"}, {}, "[M, N]"},
      {"mul", {"B,1,N", "M,1"}, {}, "[B, M, N]"},
      {"add",
       {"M,N", "M,K"},
       {},
       "error: 'add' operands do not broadcast together: 'a' has shape [M, N] and 'b' has shape "
       "[M, K]"},
      {"matmul", {"M,K", "K,N"}, {}, "[M, N]"},
      {"matmul", {"B,M,K", "K,N"}, {}, "[B, M, N]"},
      {"matmul", {"B,M,K", "B,K,N"}, {}, "[B, M, N]"},
      {"matmul",
       {"M,K", "N,K"},
       {},
       "error: 'matmul' needs matching dims: k of 'a' [M, K] is K, but of 'b' [N, K] is N"},
      {"matmul",
       {"M", "M,N"},
       {},
       "error: 'matmul' cannot take 'a' of shape [M]: expected a shape like [*B, m, k]"},
      {"sum", {"M,N"}, {{"axis", std::int64_t{1}}}, "[M]"},
      {"sum", {"M,N"}, {{"axis", std::int64_t{-1}}, {"keepdims", true}}, "[M, 1]"},
      {"mean", {"B,M,N"}, {{"axis", std::int64_t{1}}}, "[B, N]"},
      {"sum",
       {"M,N"},
       {{"axis", std::int64_t{2}}},
       "error: axis 2 is out of range for 'x' of rank 2 in 'sum' (valid: -2 to 1)"},
      {"sum", {"M,N"}, {}, "error: 'sum' needs the argument 'axis'"},
      {"sum",
       {"M,N"},
       {{"axis", 1.5}},
       "error: argument 'axis' of 'sum' must be an integer axis, got 1.5"},
      {"cumsum", {"M,N"}, {{"axis", std::int64_t{1}}}, "[M, N]"},
      {"transpose", {"M,N,K"}, {}, "[K, N, M]"},
      {"transpose", {"A,B,C"}, {{"axes", std::vector<Dim>{1, 0, 2}}}, "[B, A, C]"},
      {"transpose",
       {"A,B"},
       {{"axes", std::vector<Dim>{0, 0}}},
       "error: axes (0, 0) of 'transpose' repeat axis 0"},
      {"reshape",
       {"M,N"},
       {{"shape", std::vector<Dim>{Dim::symbol("N"), Dim::symbol("M")}}},
       "[N, M]"},
      {"reshape",
       {"M,N"},
       {{"shape", std::vector<Dim>{Dim::symbol("N")}}},
       "error: 'reshape' requires numel(S) == numel(T): M * N == N does not hold (it would need "
       "M == 1: write 1 for M)"},
      {"concat", {"M,A", "M,B"}, {{"axis", std::int64_t{1}}}, "[M, A + B]"},
      {"concat",
       {"M,A", "N,B"},
       {{"axis", std::int64_t{1}}},
       "error: 'concat' operands do not match: 'a' has shape [M, A] and 'b' has shape [N, B]"},
      {"repeat",
       {"H,N,D"},
       {{"repeats", std::int64_t{4}}, {"axis", std::int64_t{0}}},
       "[4 * H, N, D]"},
      {"broadcast_to",
       {"N"},
       {{"shape", std::vector<Dim>{Dim::symbol("M"), Dim::symbol("N")}}},
       "[M, N]"},
      {"broadcast_to",
       {"K"},
       {{"shape", std::vector<Dim>{Dim::symbol("M"), Dim::symbol("N")}}},
       "error: 'broadcast_to' cannot broadcast shape [K] to [M, N]"},
      {"slice",
       {"M,N"},
       {{"begin", std::vector<Dim>{0, 0}},
        {"end", std::vector<Dim>{Dim::symbol("M"), floordiv(Dim::symbol("N"), 2)}},
        {"step", std::vector<Dim>{1, 1}}},
       "[M, N // 2]"},
      {"slice",
       {"M,N"},
       {{"begin", std::vector<Dim>{1, 0}},
        {"end", std::vector<Dim>{Dim::symbol("M"), Dim::symbol("N")}},
        {"step", std::vector<Dim>{2, 1}}},
       "[M // 2, N]"},
      {"slice",
       {"8"},
       {{"begin", std::vector<Dim>{2}},
        {"end", std::vector<Dim>{9}},
        {"step", std::vector<Dim>{1}}},
       "error: 'slice' requires *S{end <= S}: 9 <= 8 does not hold"},
      {"scan", {"C,S,M", "C,S,M"}, {{"axis", std::int64_t{2}}}, "[C, S, M]"},
      {"exp", {"M,N", "M,N"}, {}, "error: 'exp' takes 1 tensor operand(s), got 2"},
      {"sum",
       {"M,N"},
       {{"axis", std::int64_t{0}}, {"axes", std::int64_t{0}}},
       "error: 'sum' has no argument 'axes'"},
  };
  for (const auto& c : cases) EXPECT_EQ(run(c), c.expect) << c.op;
}

TEST(Instantiate, DivisibilityBecomesPrecondition) {
  Dim n = Dim::symbol("N");
  OpInstance inst = instantiate(*OpTable::builtin().find("add"),
                                {{n - floordiv(n, 2)}, {floordiv(n, 2)}}, {}, {});
  ASSERT_EQ(inst.preconditions.size(), 1u);
  EXPECT_EQ(inst.preconditions[0].str(), "N - N // 2 == N // 2");
  EXPECT_TRUE(*inst.preconditions[0].holds({{"N", 8}}));
  EXPECT_FALSE(*inst.preconditions[0].holds({{"N", 7}}));
}

// Relations between dims that only some dims satisfy become preconditions in solved form, with
// the op's location; those no dims satisfy stay errors (ShapeInference).
TEST(Instantiate, RelationsBecomePreconditions) {
  Dim c = Dim::symbol("C"), d = Dim::symbol("D"), f = Dim::symbol("F"), h = Dim::symbol("H"),
      n = Dim::symbol("N"), s = Dim::symbol("S"), t = Dim::symbol("T");
  struct Case {
    const char* op;
    std::vector<std::vector<Dim>> operands;
    AttrMap attrs;
    const char* shape;
    const char* precondition;
    DimEnv good, bad;
  } cases[] = {
      {"reshape",
       {{s, c}},
       {{"shape", std::vector<Dim>{s, h, d}}},
       "[S, H, D]",
       "C == D * H",
       {{"S", 4}, {"C", 12}, {"H", 3}, {"D", 4}},
       {{"S", 4}, {"C", 12}, {"H", 4}, {"D", 4}}},
      {"mul",
       {{t, f}, {t, n - f}},
       {},
       "[T, F]",
       "N == 2 * F",
       {{"T", 2}, {"F", 3}, {"N", 6}},
       {{"T", 2}, {"F", 3}, {"N", 7}}},
      {"matmul",
       {{t, h * d}, {c, n}},
       {},
       "[T, N]",
       "C == D * H",
       {{"T", 1}, {"H", 2}, {"D", 8}, {"C", 16}, {"N", 1}},
       {{"T", 1}, {"H", 2}, {"D", 8}, {"C", 15}, {"N", 1}}},
  };
  for (const auto& k : cases) {
    SourceLoc at{"k.py", 3, 9};
    OpInstance inst = instantiate(*OpTable::builtin().find(k.op), k.operands, k.attrs, at);
    EXPECT_EQ(format_shape(inst.shape), k.shape) << k.op;
    ASSERT_EQ(inst.preconditions.size(), 1u) << k.op;
    const Precondition& p = inst.preconditions[0];
    EXPECT_EQ(p.str(), k.precondition) << k.op;
    EXPECT_EQ(format_loc(p.loc), "k.py:3:9");
    EXPECT_EQ(p.holds(k.good), true) << k.op;
    EXPECT_EQ(p.holds(k.bad), false) << k.op;
  }
}

TEST(Instantiate, PreconditionValuesNameBothSides) {
  Dim c = Dim::symbol("C"), d = Dim::symbol("D"), h = Dim::symbol("H");
  Precondition p{c, BinOp::Eq, d * h, "'reshape' requires numel(S) == numel(T)", {}};
  EXPECT_EQ(p.values({{"C", 96}, {"D", 16}, {"H", 8}}), "C = 96 and D * H = 128");
  Precondition q{c, BinOp::Le, Dim(128), "", {}};
  EXPECT_EQ(q.values({{"C", 200}}), "C = 200");
}

TEST(Instantiate, ElementExpressions) {
  auto body = [](const char* op, std::vector<std::vector<Dim>> shapes, AttrMap attrs) {
    return instantiate(*OpTable::builtin().find(op), shapes, attrs, {}).body.str();
  };
  Dim M = Dim::symbol("M"), K = Dim::symbol("K"), N = Dim::symbol("N");
  EXPECT_EQ(body("matmul", {{M, K}, {K, N}}, {}), "sum(k < size(K), (in0[m, k] * in1[k, n]))");
  EXPECT_EQ(body("add", {{M, N}, {N}}, {}), "(in0[S0, S1] + in1[S1])");
  EXPECT_EQ(body("add", {{M, 1}, {M, N}}, {}), "(in0[S0, 0] + in1[S0, S1])");
  // Output position 0 holds x's axis 1: out[o0, o1] = x[o1, o0], printed by x's axis names.
  EXPECT_EQ(body("transpose", {{M, N}}, {}), "in0[S0, S1]");
  EXPECT_EQ(body("sum", {{M, N}}, {{"axis", std::int64_t{0}}}), "sum(r < size(M), in0[r, Q0])");
  EXPECT_EQ(body("cumsum", {{M, N}}, {{"axis", std::int64_t{1}}}), "sum(j < (r + 1), in0[P0, j])");
}

}  // namespace
}  // namespace ts::sem
