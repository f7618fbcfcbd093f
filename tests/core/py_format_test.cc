// Number and array formatting checked against what Python and NumPy print for the same values.
#include "core/py_format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <sstream>

#include "support/test_util.h"

namespace parity {
namespace {

using testing::run_python;

std::vector<std::string> split(const std::string& text, const std::string& sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t pos; (pos = text.find(sep, start)) != std::string::npos; start = pos + sep.size())
    parts.push_back(text.substr(start, pos - start));
  parts.push_back(text.substr(start));
  return parts;
}

TEST(Format, FloatsLikePython) {
  const std::vector<std::string> literals = {"0.0",
                                             "-0.0",
                                             "1e-05",
                                             "0.1",
                                             "0.3333333333333333",
                                             "123456789.0",
                                             "1e16",
                                             "1.5e16",
                                             "0.0001",
                                             "9.99995e-05",
                                             "2.5",
                                             "100.0",
                                             "12345.678",
                                             "5e-324",
                                             "1.7976931348623157e308",
                                             "0.00012345",
                                             "99999.5",
                                             "1e-100",
                                             "-7.25e-07",
                                             "inf",
                                             "-inf",
                                             "nan",
                                             "1234567.0",
                                             "0.30000000000000004"};
  std::string script = "import math\nfor s in [";
  for (const auto& l : literals) script += "'" + l + "',";
  script +=
      "]:\n    v = float(s)\n    print(repr(v), format(v, '.5g'), format(v, '.4g'), "
      "format(v, '.3g'))\n";
  auto py = run_python(script);
  ASSERT_EQ(py.exit_code, 0) << py.output;
  std::istringstream lines(py.output);
  for (const auto& l : literals) {
    std::string repr, g5, g4, g3;
    lines >> repr >> g5 >> g4 >> g3;
    double v = std::strtod(l.c_str(), nullptr);
    EXPECT_EQ(format_repr(v), repr) << l;
    EXPECT_EQ(format_g(v, 5), g5) << l;
    EXPECT_EQ(format_g(v, 4), g4) << l;
    EXPECT_EQ(format_g(v, 3), g3) << l;
  }
}

template <typename T>
Tensor make(Shape shape, std::vector<T> v) {
  return Tensor::from_vector<T>(std::move(shape), v);
}

Tensor halfs(std::vector<double> v) {
  Tensor t(DataType::kFloat16, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.data<float16>()[i] = float16::from_double(v[i]);
  return t;
}

TEST(Format, ArraysLikeNumpy) {
  const float nan = NAN, inf = INFINITY;
  std::vector<float> ramp30, ramp2000;
  for (int i = 0; i < 30; ++i) ramp30.push_back(static_cast<float>(i) / 7.0f);
  for (int i = 0; i < 2000; ++i) ramp2000.push_back(static_cast<float>(i) * 0.5f);
  std::vector<double> cube;
  for (int i = 0; i < 24; ++i) cube.push_back(std::sin(i) * 100);
  std::vector<int64_t> big_ints;
  for (int i = 0; i < 1200; ++i) big_ints.push_back(i * 37 - 500);
  std::vector<std::pair<std::string, Tensor>> cases = {
      {"np.array([0, 0.1, 0.5, 0.75, 1], dtype=np.float32)",
       make<float>({5}, {0, 0.1f, 0.5f, 0.75f, 1})},
      {"np.array([1.5, 2.25e-7, 3], dtype=np.float32)", make<float>({3}, {1.5f, 2.25e-7f, 3})},
      {"np.array([1e-5, 1e10])", make<double>({2}, {1e-5, 1e10})},
      {"np.array([1, np.nan, -np.inf], dtype=np.float32)", make<float>({3}, {1, nan, -inf})},
      {"np.array([np.nan, np.inf], dtype=np.float32)", make<float>({2}, {nan, inf})},
      {"np.array([[1, 2], [3, 4]], dtype=np.int32)", make<int32_t>({2, 2}, {1, 2, 3, 4})},
      {"np.array([-5, 100], dtype=np.int64)", make<int64_t>({2}, {-5, 100})},
      {"np.array([True, False])", make<bool>({2}, {true, false})},
      {"np.array([0.1, 0.2, 1000], dtype=np.float16)", halfs({0.1, 0.2, 1000})},
      {"np.arange(30, dtype=np.float32) / np.float32(7)", make<float>({30}, ramp30)},
      {"(np.sin(np.arange(24)) * 100).reshape(2, 3, 4)", make<double>({2, 3, 4}, cube)},
      {"np.array(2.5, dtype=np.float32)", make<float>({}, {2.5f})},
      {"np.zeros((0, 3), dtype=np.float32)", Tensor(DataType::kFloat32, {0, 3})},
      {"np.arange(2000, dtype=np.float32) * np.float32(0.5)", make<float>({2000}, ramp2000)},
      {"(np.arange(1200, dtype=np.int64) * 37 - 500).reshape(30, 40)",
       make<int64_t>({30, 40}, big_ints)},
      {"np.array([1/3, 2/3])", make<double>({2}, {1.0 / 3, 2.0 / 3})},
      {"np.array([-0.0, 1], dtype=np.float32)", make<float>({2}, {-0.0f, 1})},
      {"np.array([0, 255], dtype=np.uint8)", make<uint8_t>({2}, {0, 255})},
      {"np.array([1e8, 1], dtype=np.float32)", make<float>({2}, {1e8f, 1})},
      {"np.array(['a', 'bc'])", make<std::string>({2}, {"a", "bc"})},
      {"np.array([[True], [False]])", make<bool>({2, 1}, {true, false})},
  };
  std::string script = "import numpy as np\n";
  for (const auto& [expr, t] : cases) script += "print(str(" + expr + "))\nprint('@@@')\n";
  auto py = run_python(script);
  ASSERT_EQ(py.exit_code, 0) << py.output;
  std::vector<std::string> expected = split(py.output, "\n@@@\n");
  ASSERT_EQ(expected.size(), cases.size() + 1);
  for (size_t i = 0; i < cases.size(); ++i)
    EXPECT_EQ(numpy_array_str(cases[i].second), expected[i]) << cases[i].first;
}

TEST(Format, NameList) {
  EXPECT_EQ(format_name_list({"a", "b"}), "['a', 'b']");
  EXPECT_EQ(format_name_list({}), "[]");
}

}  // namespace
}  // namespace parity
