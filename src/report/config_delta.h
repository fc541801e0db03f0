// The knobs that differ between two candidate configurations (the `config` text of /best and
// /candidates), so `diff` can say what changed in a line instead of printing both configs whole.
#pragma once

#include <string>

namespace ts::report::detail {

// A config reads "v0 fused engines=alternate bufs=2 | op: lowering | ... | g0: pt=128 block=1":
// flags and key=value knobs, then " | "-separated named parts, each either key=value knobs or
// one lowering. Returns the differences, "; "-separated, in the order they appear: "engines:
// default -> alternate", "g0.pt: 128 -> 64", "+instruction-fusion", "mul@2: tensor_tensor(..) ->
// tensor_scalar(..)" (lowerings shortened to `width` characters), "" when the texts agree.
std::string config_delta(const std::string& before, const std::string& after,
                         std::size_t width = 48);

}  // namespace ts::report::detail
