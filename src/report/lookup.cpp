#include "tilesweep/report/lookup.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "tilesweep/base/error.h"
#include "tilesweep/base/suggest.h"

namespace ts::report {
namespace {

std::vector<std::string> names_of(const store::Library& lib, const std::string& kernel) {
  std::set<std::string> out;
  for (const auto& e : lib.entries)
    out.insert(kernel.empty() ? e.kernel : (e.kernel == kernel ? e.target : ""));
  out.erase("");
  return {out.begin(), out.end()};
}

bool same_names(const sem::DimEnv& a, const sem::DimEnv& b) {
  if (a.size() != b.size()) return false;
  for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib)
    if (ia->first != ib->first) return false;
  return true;
}

double distance(const sem::DimEnv& entry, const sem::DimEnv& asked) {
  double d = 0;
  for (const auto& [name, size] : asked)
    d += std::abs(std::log2(double(entry.at(name)) / double(size)));
  return d;
}

double volume(const sem::DimEnv& dims) {
  double v = 1;
  for (const auto& [name, size] : dims) v *= double(size);
  return v;
}

}  // namespace

sem::DimEnv parse_record_shape(const std::string& shape) {
  sem::DimEnv dims;
  std::stringstream ss(shape);
  std::string item;
  while (std::getline(ss, item, ',')) {
    auto eq = item.find('=');
    try {
      if (eq == std::string::npos) throw std::invalid_argument("no '='");
      dims[item.substr(0, eq)] = std::stoll(item.substr(eq + 1));
    } catch (const std::exception&) {
      throw UserError(
          fmt::format("error: shape '{}' is malformed (expected NAME=SIZE,...)", shape));
    }
  }
  return dims;
}

LookupAnswer lookup(const store::Library& lib, const std::string& path, const std::string& kernel,
                    const std::string& target, const sem::DimEnv& dims, const std::string& mesh) {
  auto kernels = names_of(lib, "");
  if (!std::count(kernels.begin(), kernels.end(), kernel))
    throw UserError(fmt::format("error: --kernel: library '{}' has no entry for kernel '{}'{}",
                                path, kernel, did_you_mean(kernel, kernels)));
  auto targets = names_of(lib, kernel);
  if (!std::count(targets.begin(), targets.end(), target))
    throw UserError(
        fmt::format("error: --target: library '{}' has no entry for kernel '{}' on target '{}'{}",
                    path, kernel, target, did_you_mean(target, targets)));
  LookupAnswer best;
  sem::DimEnv best_dims;
  for (const auto& e : lib.entries) {
    if (e.kernel != kernel || e.target != target || e.mesh != mesh) continue;
    sem::DimEnv ed = parse_record_shape(e.shape);
    if (!same_names(ed, dims)) continue;
    double d = distance(ed, dims);
    bool better = !best.entry || d < best.distance - 1e-12 ||
                  (std::abs(d - best.distance) <= 1e-12 && volume(ed) > volume(best_dims));
    if (better) best = {&e, ed == dims, d, ""}, best_dims = ed;
  }
  if (!best.entry) {
    std::string names, shapes;
    for (const auto& [n, s] : dims) names += (names.empty() ? "" : ",") + n;
    for (const auto& e : lib.entries)
      if (e.kernel == kernel && e.target == target)
        shapes += fmt::format("{}{} (mesh {})", shapes.empty() ? "" : "; ", e.shape, e.mesh);
    throw UserError(fmt::format(
        "error: --shape: library '{}' has no entry of kernel '{}' on {} (mesh {}) with dims "
        "{}; its entries: {}",
        path, kernel, target, mesh, names, shapes));
  }
  best.rule = best.exact
                  ? "exact match"
                  : fmt::format(
                        "nearest: same kernel, target and mesh; smallest sum of |log2(dim ratio)| "
                        "= {:.3f}; ties to the larger shape",
                        best.distance);
  return best;
}

}  // namespace ts::report
