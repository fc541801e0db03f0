#include "tilesweep/nki_import/importer.h"

#include <cctype>

#include "tilesweep/nki_import/parser.h"
#include "translator.h"

namespace ts::nki {

namespace {

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  std::size_t b = 0;
  while (b < s.size() && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  return s.substr(b);
}

[[noreturn]] void bad_arg(const std::string& text, const std::string& why) {
  throw UserError(fmt::format(
      "--arg '{}': {}; write NAME=DTYPE[D0,D1,...] for a tensor (e.g. a=bf16[128,512]) or "
      "NAME=VALUE for a scalar (e.g. eps=1e-5)",
      text, why));
}

}  // namespace

KernelArg parse_kernel_arg(const std::string& text) {
  KernelArg a;
  std::size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) bad_arg(text, "no NAME=");
  a.name = trim(text.substr(0, eq));
  std::string v = trim(text.substr(eq + 1));
  std::size_t br = v.find('[');
  if (br == std::string::npos) {
    std::size_t used = 0;
    try {
      a.value = std::stod(v, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (v.empty() || used != v.size()) bad_arg(text, "a scalar must be a number");
    a.scalar = true;
    a.integer = v.find_first_of(".eE") == std::string::npos;
    return a;
  }
  auto dt = ir::parse_dtype(trim(v.substr(0, br)));
  if (!dt)
    bad_arg(text, fmt::format("unknown dtype '{}' (f32, bf16, f16, f8)", trim(v.substr(0, br))));
  a.dtype = *dt;
  if (v.back() != ']') bad_arg(text, "the shape must end with ']'");
  std::string dims = v.substr(br + 1, v.size() - br - 2);
  std::size_t pos = 0;
  while (pos <= dims.size()) {
    std::size_t comma = dims.find(',', pos);
    std::string d =
        trim(dims.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
    std::size_t used = 0;
    long long n = 0;
    try {
      n = std::stoll(d, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (d.empty() || used != d.size() || n <= 0)
      bad_arg(text, fmt::format("dim '{}' is not a positive integer", d));
    a.shape.push_back(n);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return a;
}

std::vector<std::string> jit_kernels(std::string_view source, const std::string& file) {
  Module m = parse_module(source, file);
  target::Target none;
  Translator t(m, none);
  std::vector<std::string> names;
  for (const Stmt& s : m.body)
    if (s.kind == StmtKind::Def && t.is_jit(s)) names.push_back(s.name);
  return names;
}

ImportedKernel import_kernel(std::string_view source, const std::string& file,
                             const std::string& kernel, const std::vector<KernelArg>& args,
                             const target::Target& t) {
  Module m = parse_module(source, file);
  Translator tr(m, t);
  std::string name = kernel;
  if (name.empty()) {
    std::vector<std::string> jit;
    for (const Stmt& s : m.body)
      if (s.kind == StmtKind::Def && tr.is_jit(s)) jit.push_back(s.name);
    if (jit.size() != 1)
      throw UserError(fmt::format("{}: {} @nki.jit functions ({}); choose one with --kernel", file,
                                  jit.size(), fmt::join(jit, ", ")));
    name = jit[0];
  }
  const Stmt* def = tr.function(name);
  if (!def) throw UserError(fmt::format("{}: no function '{}' (--kernel)", file, name));
  return tr.run(*def, args);
}

}  // namespace ts::nki
