#include "io/json_parser.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "io/io_test_helpers.h"

namespace parity::io {
namespace {

using testing::python_in;
using testing::read_text;
using testing::TempDir;

// Documents as Python's json module writes them, with every kind of value and escape, read
// the same as nlohmann's own (character-by-character) parser reads them.
TEST(JsonParser, AgreesWithNlohmannOnPythonOutput) {
  TempDir dir;
  ASSERT_TRUE(python_in(dir, R"(
rng = np.random.default_rng(12)
doc = {
    'text': ['', 'plain', 'quote " backslash \\ slash /', 'ctl \b\f\n\r\t \x00 \x1f \x7f',
             'latin \u00e9 \u00ff', 'cjk \u4e2d', 'astral \U0001F600 \U0010FFFF',
             ''.join(chr(int(c)) for c in rng.integers(32, 0x2FFF, 500))],
    'numbers': [0, -0, 1, -1, 2**53, -2**63, 2**63 - 1, 0.0, -0.0, 0.5, 1e-05, 1e16, 1.5e-07,
                5e-324, 1.7976931348623157e308, 123.456]
               + [float(x) for x in rng.standard_normal(50)],
    'nested': {'a': [[], {}, [[[]]], {'b': {'c': None}}], 'true': True, 'false': False},
    'order': {'z': 1, 'a': 2, 'm': 3},
}
styles = [dict(indent=4), dict(), dict(ensure_ascii=False), dict(separators=(',', ':'))]
for i, kw in enumerate(styles):
    open(f'{D}/doc{i}.json', 'w', encoding='utf-8').write(json.dumps(doc, **kw))
)"));
  for (int i = 0; i < 4; ++i) {
    std::string text = read_text(dir.file(fmt::format("doc{}.json", i)));
    nlohmann::ordered_json ours = parse_json(text);
    nlohmann::ordered_json theirs = nlohmann::ordered_json::parse(text);
    EXPECT_EQ(ours, theirs) << i;
    EXPECT_EQ(ours.dump(), theirs.dump()) << i;  // same key order and number kinds too
  }
}

TEST(JsonParser, ReadsPythonsNonFiniteFloatsAndOutOfRangeNumbers) {
  auto j = parse_json("[NaN, Infinity, -Infinity, 1e999, -1e999, 1E-999, -1e-999, 1e400]");
  EXPECT_TRUE(std::isnan(j[0].get<double>()));
  EXPECT_EQ(j[1].get<double>(), INFINITY);
  EXPECT_EQ(j[2].get<double>(), -INFINITY);
  EXPECT_EQ(j[3].get<double>(), INFINITY);
  EXPECT_EQ(j[4].get<double>(), -INFINITY);
  EXPECT_EQ(j[5].get<double>(), 0.0);
  EXPECT_TRUE(std::signbit(j[6].get<double>()));
  EXPECT_EQ(j[7].get<double>(), INFINITY);
  EXPECT_TRUE(parse_json("99999999999999999999").is_number_float());
  EXPECT_EQ(parse_json(R"({"a": 1, "a": 2})")["a"], 2);  // the last value wins, as in Python
}

TEST(JsonParser, MalformedTextIsAnError) {
  const char* bad[] = {
      "",      "[",       "]",           "{",        "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "[1,]",
      "[1 2]", "01",      "1.",          "-",        "1e",      ".5",       "tru",        "nul",
      "\"abc", "\"\\x\"", "\"\\u12G4\"", "\"a\nb\"", "{1: 2}",  "[1] [2]",  "'single'",   "[nan]"};
  for (const char* text : bad) {
    try {
      parse_json(text);
      ADD_FAILURE() << "accepted " << text;
    } catch (const Error& e) {
      EXPECT_TRUE(std::string(e.what()).starts_with("failed to parse JSON at line ")) << e.what();
    }
  }
  try {
    parse_json("{\n  \"a\": [1,\n   x]}");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_TRUE(std::string(e.what()).starts_with("failed to parse JSON at line 3, column 4"))
        << e.what();
  }
  // Hostile nesting is refused before it can exhaust the stack.
  EXPECT_THROW(parse_json(std::string(100000, '[')), Error);
  EXPECT_NO_THROW(parse_json(std::string(500, '[') + std::string(500, ']')));
}

}  // namespace
}  // namespace parity::io
