// TomlReader: every typed getter, range, location and suggestion, table-driven — one TOML
// document and one read per case, the value or the exact error expected.
#include "tilesweep/base/toml_reader.h"

#include <gtest/gtest.h>

#include <cctype>
#include <functional>
#include <string>

namespace ts {
namespace {

// Parses `text` as "t.toml" and runs `read` on it; the value read (as text) or the error.
std::string run(const std::string& text,
                const std::function<std::string(const TomlReader&, const toml::table&)>& read) {
  TomlReader r("t.toml");
  try {
    toml::table doc = r.parse(text);
    return read(r, doc);
  } catch (const UserError& e) {
    return e.what();
  }
}

struct Case {
  const char* name;
  const char* text;
  std::function<std::string(const TomlReader&, const toml::table&)> read;
  const char* expected;
};

std::string integer(const TomlReader& r, const toml::table& d, std::int64_t lo, std::int64_t hi) {
  return std::to_string(r.integer(r.required(d, "n", "n"), "n", lo, hi));
}

const Case kCases[] = {
    {"syntax error at its line and column", "a = 1\nb = [1,\n",
     [](auto&, auto&) { return std::string("parsed"); },
     "t.toml:2:9: error: Error while parsing array: encountered end-of-file"},
    {"integer", "n = 42\n", [](auto& r, auto& d) { return integer(r, d, 0, 100); }, "42"},
    {"integer of the wrong type", "n = \"x\"\n",
     [](auto& r, auto& d) { return integer(r, d, 0, 100); },
     "t.toml:1:5: error: 'n' must be an integer, not a string"},
    {"integer out of range", "n = 128\n", [](auto& r, auto& d) { return integer(r, d, 1, 64); },
     "t.toml:1:5: error: 'n' must be between 1 and 64, got 128"},
    {"integer below an open range", "n = -3\n",
     [](auto& r, auto& d) { return integer(r, d, 0, TomlReader::kNoLimit); },
     "t.toml:1:5: error: 'n' must be at least 0, got -3"},
    {"missing key, at the table", "[s]\nm = 1\n",
     [](auto& r, auto& d) {
       return std::to_string(r.integer(r.required(r.section(d, "s"), "n", "s.n"), "s.n", 0));
     },
     "t.toml:1:1: error: missing key 's.n'"},
    {"number from an integer", "x = 2\n",
     [](auto& r, auto& d) { return std::to_string(r.number(r.required(d, "x", "x"), "x", 0, 10)); },
     "2.000000"},
    {"number from a float", "x = 2.5e9\n",
     [](auto& r, auto& d) {
       return std::to_string(r.number(r.required(d, "x", "x"), "x", 1e8, 1e10));
     },
     "2500000000.000000"},
    {"number out of range", "x = 2.8e12\n",
     [](auto& r, auto& d) {
       return std::to_string(r.number(r.required(d, "x", "c.x"), "c.x", 1e8, 1e10));
     },
     "t.toml:1:5: error: 'c.x' must be between 100000000 and 10000000000, got 2800000000000"},
    {"number of the wrong type", "x = true\n",
     [](auto& r, auto& d) { return std::to_string(r.number(r.required(d, "x", "x"), "x", 0, 1)); },
     "t.toml:1:5: error: 'x' must be a number, not a boolean"},
    {"string", "s = \"hi\"\n",
     [](auto& r, auto& d) { return r.string(r.required(d, "s", "s"), "s"); }, "hi"},
    {"string of the wrong type", "s = [1]\n",
     [](auto& r, auto& d) { return r.string(r.required(d, "s", "s"), "s"); },
     "t.toml:1:5: error: 's' must be a string, not a list"},
    {"boolean", "b = false\n",
     [](auto& r, auto& d) {
       return std::string(r.boolean(r.required(d, "b", "b"), "b") ? "true" : "false");
     },
     "false"},
    {"boolean of the wrong type", "b = 1\n",
     [](auto& r, auto& d) {
       return std::string(r.boolean(r.required(d, "b", "b"), "b") ? "true" : "false");
     },
     "t.toml:1:5: error: 'b' must be true or false, not an integer"},
    {"list", "l = [\"a\", \"b\"]\n",
     [](auto& r, auto& d) {
       return std::to_string(r.list(r.required(d, "l", "l"), "l", "[\"a\"]").size());
     },
     "2"},
    {"empty list, with an example", "l = []\n",
     [](auto& r, auto& d) {
       return std::to_string(r.list(r.required(d, "l", "l"), "l", "[\"a\"]").size());
     },
     "t.toml:1:5: error: 'l' is empty; give at least one, like l = [\"a\"]"},
    {"list of the wrong type", "l = 3\n",
     [](auto& r, auto& d) {
       return std::to_string(r.list(r.required(d, "l", "l"), "l", "[\"a\"]").size());
     },
     "t.toml:1:5: error: 'l' must be a list, like l = [\"a\"], not an integer"},
    {"optional table absent", "a = 1\n",
     [](auto& r, auto& d) { return std::string(r.table(d, "s") ? "table" : "none"); }, "none"},
    {"table of the wrong type", "s = 1\n",
     [](auto& r, auto& d) { return std::string(r.table(d, "s") ? "table" : "none"); },
     "t.toml:1:5: error: 's' must be a table ([s]), not an integer"},
    {"section by dotted path", "[engine.tensor]\nclock = 1\n",
     [](auto& r, auto& d) { return std::to_string(r.section(d, "engine.tensor").size()); }, "1"},
    {"missing section", "[engine.vector]\n",
     [](auto& r, auto& d) { return std::to_string(r.section(d, "engine.tensor").size()); },
     "t.toml:1:1: error: missing table [engine.tensor]"},
    {"unknown key, with a suggestion", "name = \"x\"\ntragets = []\n",
     [](auto& r, auto& d) {
       r.check_keys(d, {"name", "targets"}, "the job");
       return std::string("ok");
     },
     "t.toml:2:1: error: unknown key 'tragets' in the job; did you mean 'targets'?"},
    {"unknown key, with the keys listed", "color = 1\n",
     [](auto& r, auto& d) {
       r.check_keys(d, {"name", "targets"}, "the job");
       return std::string("ok");
     },
     "t.toml:1:1: error: unknown key 'color' in the job (its keys: name, targets)"},
    {"known keys pass", "name = \"x\"\n",
     [](auto& r, auto& d) {
       r.check_keys(d, {"name", "targets"}, "the job");
       return std::string("ok");
     },
     "ok"},
};

class TomlReaderCase : public ::testing::TestWithParam<Case> {};

TEST_P(TomlReaderCase, ReadsOrExplains) {
  const Case& c = GetParam();
  EXPECT_EQ(run(c.text, c.read), c.expected) << c.name;
}

INSTANTIATE_TEST_SUITE_P(Cases, TomlReaderCase, ::testing::ValuesIn(kCases), [](const auto& info) {
  std::string name;  // "missing key, at the table" -> "MissingKeyAtTheTable"
  bool upper = true;
  for (char ch : std::string(info.param.name)) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) {
      upper = true;
      continue;
    }
    name += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(ch))) : ch;
    upper = false;
  }
  return name;
});

TEST(TomlTypeName, NamesEveryValueType) {
  toml::table doc =
      TomlReader("t.toml").parse("i = 1\nf = 1.5\ns = \"x\"\nb = true\nl = []\nt = {}\n");
  EXPECT_STREQ(toml_type_name(*doc.get("i")), "an integer");
  EXPECT_STREQ(toml_type_name(*doc.get("f")), "a float");
  EXPECT_STREQ(toml_type_name(*doc.get("s")), "a string");
  EXPECT_STREQ(toml_type_name(*doc.get("b")), "a boolean");
  EXPECT_STREQ(toml_type_name(*doc.get("l")), "a list");
  EXPECT_STREQ(toml_type_name(*doc.get("t")), "a table");
}

}  // namespace
}  // namespace ts
