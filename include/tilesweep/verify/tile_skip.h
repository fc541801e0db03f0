// The tile-skipping rule of masked reductions (causal attention): a tile every element of which a
// `where` replaces by its constant contributes the reduction's identity, so it need not be
// computed. Proved with Z3 over unbounded tile sizes and tile indices.
//
// The mask is the one a `where` over iota comparisons lowers to (affine_select, isa.toml): element
// (p, f) of the tile at row tile i and column tile j, P rows by W columns, keeps its value where
//   offset + channel_multiplier * p + step * f >= 0,  offset = row * i * P + col * j * W + constant
// (the tile origins i * P and j * W times the comparison's coefficients), and takes `fill`
// elsewhere. `where(iota(S, axis=1) <= iota(S, axis=0), s, -inf)` is row 1, col -1, constant 0,
// channel_multiplier 1, step -1, fill -inf.
//
// The rule has two parts, both proved:
//  1. Every element of the tile is masked where the guard fails, i.e. where
//       row * P * i + col * W * j + constant + corner(P, W) < 0,
//     corner = max(0, channel_multiplier) * (P - 1) + max(0, step) * (W - 1) (the largest value of
//     the affine predicate over the tile): for all i, j >= 0, P, W >= 1, p in [0, P), f in [0, W).
//     For the causal mask the guard fails exactly where j * W >= (i + 1) * P.
//  2. A tile of `fill` values contributes the identity to the reduction it feeds, over the
//     extended reals (-inf, finite reals, +inf; exp(-inf) = 0, exp of a finite value an unknown
//     positive real) for every accumulator: max(acc, fill) = acc; l + exp(fill - m) = l for a
//     finite running max m; acc + exp(fill - m) / l * v = acc for finite m, v and l > 0 (the
//     probability tile's product with the values, accumulated). The online (FlashAttention)
//     step that streams key tiles (lower/online_split.h) folds the running max first,
//     m' = max(m, tile max), and rescales the running values by exp(m - m') before adding the
//     tile's: for a finite m, m' = m, l * exp(m - m') + exp(fill - m') = l and acc * exp(m - m')
//     + exp(fill - m') * v = acc (exp(0) = 1 asserted beside positivity).
// A predicate with a p * f term (not affine) or a fill that is not the identity is refused with
// the reason.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ts::verify {

struct TileMask {
  std::int64_t row = 0, col = 0, constant = 0;    // the offset's coefficients
  std::int64_t channel_multiplier = 0, step = 0;  // per element: p and f
  std::int64_t cross = 0;                         // coefficient of p * f (nonzero: not affine)
};

// What the masked tile feeds: max(acc, x); l + exp(x - m); acc + exp(x - m) / l * v; and the
// online step's rescaled forms of the last two (RescaledSumExp: l * exp(m - m') + exp(x - m'),
// RescaledMatmulAccumulate: acc * exp(m - m') + exp(x - m') * v, with m' = max(m, x)).
enum class Contribution { Max, SumExp, MatmulAccumulate, RescaledSumExp, RescaledMatmulAccumulate };

// The masked select the rule models, as an instruction's semantics reads (isa.toml's
// affine_select; sem::to_string of its expression), and the names of its attributes: a lowering
// skips tiles of an instruction whose semantics read exactly so.
inline constexpr const char* kMaskedSelect =
    "select(offset + channel_multiplier * p + step * f >= 0, on_true, on_false_value)";
inline constexpr const char* kMaskOffset = "offset";
inline constexpr const char* kMaskChannelMultiplier = "channel_multiplier";
inline constexpr const char* kMaskStep = "step";
inline constexpr const char* kMaskFill = "on_false_value";

// The chain from a streamed value x and its running max s that the exp contributions model,
// written as lower/online_split.h writes a kernel's chain: a streamed consumer is skipped by this
// rule only where its chain reads exactly so.
inline constexpr const char* kExpChain = "exp(sub(x, s))";

struct TileSkipRule {
  TileMask mask;
  double fill = 0;  // the where's constant (-inf for causal attention)
  Contribution into = Contribution::Max;
};

struct TileSkipProof {
  bool proved = false;
  std::string why;  // when not proved: which part failed and why
  // The guard of part 1: a tile runs where row * P * i + col * W * j + constant + corner >= 0.
  std::int64_t corner(std::int64_t rows, std::int64_t cols) const;
  TileMask mask;
};

// Proves both parts of the rule; `timeout_ms` per solver check (the checks take milliseconds).
TileSkipProof prove_tile_skip(const TileSkipRule& rule, unsigned timeout_ms = 10000);
// The same, each distinct rule proved once per process (the lowering asks per candidate it
// materializes); thread-safe.
TileSkipProof prove_tile_skip_once(const TileSkipRule& rule);

const char* contribution_name(Contribution c);

// The whole-row case: the masked row's tile [P, row] on chip whole, one select over it, and the
// loops over its column windows (the score matmul's N tiles, the probabilities' key tiles of the
// P.V matmul) outside the select. A window of w columns from column c0 of the select's tile is
// masked entirely where
//   offset + max(0, channel_multiplier) (P - 1) + step * c0 + max(0, step) (w - 1) < 0
// (offset the select's, at the tile: the largest value of the predicate over the window), proved
// for all integers offset, P >= 1, c0 >= 0, w >= 1 and every element p < P, c0 <= f < c0 + w.
// Then either:
//  - Overwritten: the window of the select's operand is not read: select(false, x, fill) is the
//    fill whatever x (its producers may leave stale data there);
//  - ZeroFactor: the value the select's window turns into through `chain` (element-wise ops of
//    the select's output, each with a finite per-row operand; a divisor nonzero) is exactly 0, and
//    a zero tile is the identity of the matmul accumulation it is the left operand of: acc +
//    chain(fill) * v = acc for finite acc and v (exp(-inf - m) = 0, 0 / l = 0, a cast of 0).
// Each over the extended reals as above; a fill or chain that gives anything else is refused.
enum class ChainOp { SubRow, AddRow, MulRow, DivRow, Exp, Cast };
enum class WindowUse { Overwritten, ZeroFactor };

struct WindowSkipRule {
  std::int64_t channel_multiplier = 0, step = 0;
  std::int64_t cross = 0;  // coefficient of p * f (nonzero: not affine)
  double fill = 0;
  WindowUse use = WindowUse::Overwritten;
  std::vector<ChainOp> chain;  // ZeroFactor: from the select's output to the matmul's operand
};

struct WindowSkipProof {
  bool proved = false;
  std::string why;
  // The guard's constant part past the select's offset and step * c0: a window runs where
  // offset + step * c0 + slack(P, w) >= 0.
  std::int64_t slack(std::int64_t rows, std::int64_t width) const;
  std::int64_t channel_multiplier = 0, step = 0;
};

WindowSkipProof prove_window_skip(const WindowSkipRule& rule, unsigned timeout_ms = 10000);
WindowSkipProof prove_window_skip_once(const WindowSkipRule& rule);  // memoized, thread-safe
const char* chain_op_name(ChainOp op);

}  // namespace ts::verify
