// "Did you mean" suggestions for misspelled names in user input.
#pragma once

#include <string>
#include <vector>

namespace ts {

// The candidate closest to `name` by edit distance, if it is close enough to be a plausible
// typo (at most a third of the name's length, at least 1); empty otherwise.
std::string closest_name(const std::string& name, const std::vector<std::string>& candidates);

// "; did you mean 'x'?" or "" — ready to append to a message.
std::string did_you_mean(const std::string& name, const std::vector<std::string>& candidates);

}  // namespace ts
