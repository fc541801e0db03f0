#include "tilesweep/target/target.h"

#include <toml++/toml.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "tilesweep/base/source.h"
#include "tilesweep/base/suggest.h"
#include "tilesweep/base/toml_reader.h"

namespace ts::embedded {
extern const std::string_view trn1_target_toml, trn1_isa_toml, trn2_target_toml, trn2_isa_toml,
    trn3_target_toml, trn3_isa_toml;
}

namespace ts::target {

namespace {

SourceLoc loc_of(const toml::node& n, const std::string& file) { return TomlReader(file).at(n); }

// Typed access to "section.key" through the one TOML reader: errors name the file, line and key.
// It remembers every key read, so that check_unread() can refuse the keys nothing reads (a
// misspelled one would otherwise be ignored silently).
class Reader {
 public:
  Reader(const toml::table& doc, std::string file) : doc_(doc), toml_(std::move(file)) {}

  const toml::table& section(const std::string& name) {
    mark(name);
    return toml_.section(doc_, name);
  }

  double number(const toml::table& t, const std::string& section, const std::string& key, double lo,
                double hi) {
    return toml_.number(need(t, section, key), path(section, key), lo, hi);
  }

  std::int64_t integer(const toml::table& t, const std::string& section, const std::string& key,
                       std::int64_t lo, std::int64_t hi) {
    return toml_.integer(need(t, section, key), path(section, key), lo, hi);
  }

  std::string string(const toml::table& t, const std::string& section, const std::string& key) {
    return toml_.string(need(t, section, key), path(section, key));
  }

  // Key `key` of section table `t`, marked read. When absent: "missing key 'sec.key'", and
  // where a key of `t` is a likely misspelling of it, that key named at its line.
  const toml::node& need(const toml::table& t, const std::string& section, const std::string& key) {
    const std::string& name = mark(path(section, key));
    if (!t.get(key))
      for (auto&& [k, v] : t)
        if (std::string other(k.str()); closest_name(other, {key}) == key)
          fail(toml_.at(k), "missing key '{}': is '{}' here a misspelling of '{}'?", name, other,
               key);
    return toml_.required(t, key, name);
  }

  // A key read directly from its table ("chip.lnc"), for check_unread().
  const std::string& mark(const std::string& dotted) { return *read_.insert(dotted).first; }

  // Every key of the document must have been read (or lead to one that was): else "unknown key
  // 'k' in [section]; did you mean 'x'?" at the key, or the keys that section has.
  void check_unread() const { check_table(doc_, ""); }

  const std::string& file() const { return toml_.file(); }

 private:
  static std::string path(const std::string& section, const std::string& key) {
    return section.empty() ? key : section + "." + key;
  }
  void check_table(const toml::table& t, const std::string& prefix) const {
    std::vector<std::string> known;
    for (const auto& p : read_)
      if (p.size() > prefix.size() && p.compare(0, prefix.size(), prefix) == 0) {
        std::string next = p.substr(prefix.size(), p.find('.', prefix.size()) - prefix.size());
        if (std::find(known.begin(), known.end(), next) == known.end()) known.push_back(next);
      }
    toml_.check_keys(
        t, known,
        prefix.empty() ? "the target file" : "[" + prefix.substr(0, prefix.size() - 1) + "]");
    for (auto&& [k, v] : t) {
      std::string full = prefix + std::string(k.str());
      bool deeper = std::any_of(read_.begin(), read_.end(), [&](const std::string& p) {
        return p.compare(0, full.size() + 1, full + ".") == 0;
      });
      if (deeper && v.is_table()) check_table(*v.as_table(), full + ".");
    }
  }

  const toml::table& doc_;
  TomlReader toml_;
  std::set<std::string> read_;  // dotted paths of the sections and keys read
};

toml::table parse(const std::string& text, const std::string& file) {
  return TomlReader(file).parse(text);
}

}  // namespace

double Target::Dma::efficiency_at(double b) const {
  if (efficiency.empty()) return 1.0;
  if (b <= efficiency.front().first) return efficiency.front().second;
  for (std::size_t i = 1; i < efficiency.size(); ++i) {
    auto [x1, y1] = efficiency[i];
    if (b <= x1) {
      auto [x0, y0] = efficiency[i - 1];
      return y0 + (y1 - y0) * (b - x0) / (x1 - x0);
    }
  }
  return efficiency.back().second;
}

Target load_target(const std::string& target_text, const std::string& target_file,
                   const std::string& isa_text, const std::string& isa_file,
                   const sem::OpTable& ops) {
  toml::table doc = parse(target_text, target_file);
  Reader r(doc, target_file);
  Target t;
  t.name = r.string(doc, "", "name");
  t.core = r.string(doc, "", "core");
  t.target_text = target_text;
  t.isa_text = isa_text;

  const toml::table& chip = r.section("chip");
  t.chip.neuron_cores = static_cast<int>(r.integer(chip, "chip", "neuron_cores", 1, 64));
  t.chip.hbm_bytes_per_s = r.number(chip, "chip", "hbm_bytes_per_s", 1e9, 1e14);
  t.chip.dma_engines = static_cast<int>(r.integer(chip, "chip", "dma_engines", 1, 4096));
  r.mark("chip.lnc");
  if (const toml::array* lnc = chip.get_as<toml::array>("lnc"))
    for (const auto& v : *lnc)
      if (v.is_integer()) t.chip.lnc.push_back(static_cast<int>(*v.value<std::int64_t>()));
  if (t.chip.lnc.empty())
    fail(loc_of(chip, target_file), "'chip.lnc' must list the logical-core options, e.g. [1, 2]");
  t.chip.hbm_stacks = static_cast<int>(r.integer(chip, "chip", "hbm_stacks", 1, 64));
  if (t.chip.neuron_cores % t.chip.hbm_stacks != 0)
    fail(loc_of(chip, target_file),
         "'chip.hbm_stacks' = {} must divide 'chip.neuron_cores' = {} (each stack serves as many "
         "cores)",
         t.chip.hbm_stacks, t.chip.neuron_cores);

  const toml::table& sbuf = r.section("sbuf");
  t.sbuf.partitions = static_cast<int>(r.integer(sbuf, "sbuf", "partitions", 1, 1024));
  t.sbuf.bytes_per_partition = r.integer(sbuf, "sbuf", "bytes_per_partition", 1024, 1 << 30);
  t.sbuf.usable_bytes_per_partition =
      r.integer(sbuf, "sbuf", "usable_bytes_per_partition", 1024, t.sbuf.bytes_per_partition);
  t.sbuf.access_init_cycles =
      static_cast<int>(r.integer(sbuf, "sbuf", "access_init_cycles", 0, 100000));
  t.sbuf.min_align_bytes = static_cast<int>(r.integer(sbuf, "sbuf", "min_align_bytes", 1, 4096));
  t.sbuf.full_rate_stride_bytes =
      static_cast<int>(r.integer(sbuf, "sbuf", "full_rate_stride_bytes", 1, 4096));

  const toml::table& psum = r.section("psum");
  t.psum.partitions = static_cast<int>(r.integer(psum, "psum", "partitions", 1, 1024));
  t.psum.bytes_per_partition = r.integer(psum, "psum", "bytes_per_partition", 256, 1 << 30);
  t.psum.banks = static_cast<int>(r.integer(psum, "psum", "banks", 1, 64));
  t.psum.bank_bytes = r.integer(psum, "psum", "bank_bytes", 64, t.psum.bytes_per_partition);

  for (auto [name, engine] :
       {std::pair{"tensor", sem::Engine::Tensor}, std::pair{"vector", sem::Engine::Vector},
        std::pair{"scalar", sem::Engine::Scalar}, std::pair{"gpsimd", sem::Engine::GpSimd}}) {
    std::string sec = std::string("engine.") + name;
    const toml::table& e = r.section(sec);
    t.engines[engine] =
        EngineSpec{r.number(e, sec, "clock_hz", 1e8, 1e10),
                   static_cast<int>(r.integer(e, sec, "elements_per_cycle", 1, 65536))};
  }

  const toml::table& o = r.section("overheads");
  t.overheads.min_ii_cycles = r.number(o, "overheads", "min_ii_cycles", 0, 1e6);
  t.overheads.mm_init_cycles = r.number(o, "overheads", "mm_init_cycles", 0, 1e6);
  t.overheads.vector_fixed_cycles = r.number(o, "overheads", "vector_fixed_cycles", 0, 1e6);
  t.overheads.gpsimd_start_cycles = r.number(o, "overheads", "gpsimd_start_cycles", 0, 1e6);
  t.overheads.dynamic_address_cycles = r.number(o, "overheads", "dynamic_address_cycles", 0, 1e6);
  t.overheads.semaphore_ns = r.number(o, "overheads", "semaphore_ns", 0, 1e6);
  t.overheads.psum_read_cycles = r.number(o, "overheads", "psum_read_cycles", 0, 1e6);
  t.overheads.core_barrier_ns = r.number(o, "overheads", "core_barrier_ns", 0, 1e6);

  const toml::table& d = r.section("dma");
  t.dma.engines_per_core = static_cast<int>(r.integer(d, "dma", "engines_per_core", 1, 1024));
  t.dma.queues_per_engine = static_cast<int>(r.integer(d, "dma", "queues_per_engine", 1, 1024));
  t.dma.bytes_per_ns_per_engine = r.number(d, "dma", "bytes_per_ns_per_engine", 0.1, 1e4);
  t.dma.start_ns = r.number(d, "dma", "start_ns", 0, 1e6);
  t.dma.dge_ns = r.number(d, "dma", "dge_ns", 0, 1e6);
  t.dma.transpose_fraction_hbm = r.number(d, "dma", "transpose_fraction_hbm", 0, 1);
  t.dma.transpose_fraction_sbuf = r.number(d, "dma", "transpose_fraction_sbuf", 0, 1);
  r.mark("dma.efficiency");
  const toml::array* eff = d.get_as<toml::array>("efficiency");
  if (!eff || eff->empty())
    fail(loc_of(d, target_file),
         "'dma.efficiency' must be a table [[bytes_per_partition, fraction], ...]");
  for (const auto& row : *eff) {
    const toml::array* pair = row.as_array();
    if (!pair || pair->size() != 2 || !(*pair)[0].is_number() || !(*pair)[1].is_number())
      fail(loc_of(row, target_file), "'dma.efficiency' rows are [bytes_per_partition, fraction]");
    auto num = [](const toml::node& n) {
      return n.is_integer() ? static_cast<double>(*n.value<std::int64_t>()) : *n.value<double>();
    };
    double x = num((*pair)[0]), y = num((*pair)[1]);
    if (y <= 0 || y > 1)
      fail(loc_of(row, target_file), "a DMA efficiency must be in (0, 1], got {}", y);
    if (!t.dma.efficiency.empty() && x <= t.dma.efficiency.back().first)
      fail(loc_of(row, target_file),
           "'dma.efficiency' rows must have increasing bytes per partition");
    t.dma.efficiency.emplace_back(x, y);
  }

  const toml::table& rf = r.section("roofline");
  t.roofline.hbm_bytes_per_s = r.number(rf, "roofline", "hbm_bytes_per_s", 1e9, 1e14);
  t.roofline.matmul_flops_fp32 = r.number(rf, "roofline", "matmul_flops_fp32", 1e9, 1e17);
  t.roofline.matmul_flops_bf16 = r.number(rf, "roofline", "matmul_flops_bf16", 1e9, 1e17);
  t.roofline.vector_flops = r.number(rf, "roofline", "vector_flops", 1e6, 1e16);

  const toml::table& m = r.section("mesh");
  t.mesh.topology = r.string(m, "mesh", "topology");
  if (t.mesh.topology != "ring" && t.mesh.topology != "torus" && t.mesh.topology != "switch")
    fail(loc_of(*m.get("topology"), target_file),
         "'mesh.topology' must be ring, torus or switch, got '{}'", t.mesh.topology);
  t.mesh.devices_per_node = static_cast<int>(r.integer(m, "mesh", "devices_per_node", 1, 4096));
  t.mesh.links_per_device = static_cast<int>(r.integer(m, "mesh", "links_per_device", 1, 64));
  t.mesh.link_bytes_per_s = r.number(m, "mesh", "link_bytes_per_s", 1e6, 1e14);
  t.mesh.intra_hop_latency_ns = r.number(m, "mesh", "intra_hop_latency_ns", 0, 1e9);
  t.mesh.inter_node_latency_ns = r.number(m, "mesh", "inter_node_latency_ns", 0, 1e9);
  t.mesh.efa_bytes_per_s = r.number(m, "mesh", "efa_bytes_per_s", 1e6, 1e14);

  r.check_unread();

  t.isa.load(isa_text, isa_file, ops);
  t.legality = parse_legality(isa_text, isa_file);
  for (const auto& req : t.legality.requirements)
    if (!t.isa.find(req.instr))
      throw UserError(
          fmt::format("error: {}: a [[legality.require]] row names '{}', which is not an "
                      "instruction of this ISA",
                      isa_file, req.instr));
  resolve_legality(t.legality, t.isa);
  return t;
}

std::vector<std::string> builtin_target_names() { return {"trn1", "trn2", "trn3"}; }

const Target& builtin_target(const std::string& name) {
  static const std::map<std::string, Target> targets = [] {
    std::map<std::string, Target> m;
    auto add = [&](const char* n, std::string_view t, std::string_view i) {
      std::string dir = std::string("src/targets/") + n + "/";
      m.emplace(n,
                load_target(std::string(t), dir + "target.toml", std::string(i), dir + "isa.toml"));
    };
    add("trn1", embedded::trn1_target_toml, embedded::trn1_isa_toml);
    add("trn2", embedded::trn2_target_toml, embedded::trn2_isa_toml);
    add("trn3", embedded::trn3_target_toml, embedded::trn3_isa_toml);
    return m;
  }();
  auto it = targets.find(name);
  if (it == targets.end())
    throw UserError(
        fmt::format("error: unknown target '{}' (bundled targets: trn1, trn2, trn3)", name));
  return it->second;
}

Target load_target_dir(const std::string& dir, const sem::OpTable& ops) {
  std::filesystem::path d(dir);
  std::string tf = (d / "target.toml").string(), isf = (d / "isa.toml").string();
  Target t = load_target(read_text_file(tf), tf, read_text_file(isf), isf, ops);
  if (t.name != d.filename().string())
    throw UserError(
        fmt::format("error: '{}' names the target '{}', but its folder is '{}'; they must agree",
                    tf, t.name, d.filename().string()));
  return t;
}

}  // namespace ts::target
