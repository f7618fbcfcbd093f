// NumpyRandomState against NumPy itself: the same seed must give the same raw words, doubles and
// bounded integers (per dtype, per range, per array length), bit for bit. The expected values
// are computed at test time by /usr/bin/python3 with NumPy and written as raw bytes.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "comparator/data_loader.h"
#include "support/test_util.h"

namespace parity {
namespace {

using testing::TempDir;

// Runs a Python script (with numpy imported as np and OUT set to the folder) and fails the test
// with its output if it does not succeed.
void run_numpy(const TempDir& dir, const std::string& body) {
  std::string script = "import numpy as np\nOUT = r'" + dir.path().string() + "'\n" + body;
  testing::CommandResult r = testing::run_python(script);
  ASSERT_EQ(r.exit_code, 0) << r.output;
}

std::string bytes_of(const void* data, size_t n) {
  return std::string(static_cast<const char*>(data), n);
}

TEST(NumpyRandomState, RawWordsMatchMt19937AcrossRegenerations) {
  TempDir dir;
  const std::vector<uint32_t> seeds = {0, 1, 5489, 123456789, 4294967295u};
  run_numpy(dir, R"(
for seed in [0, 1, 5489, 123456789, 4294967295]:
    raw = np.random.RandomState(seed)._bit_generator.random_raw(1500).astype(np.uint32)
    open(f'{OUT}/raw_{seed}.bin', 'wb').write(raw.tobytes())
)");
  for (uint32_t seed : seeds) {
    NumpyRandomState rng(seed);
    std::vector<uint32_t> words(1500);
    for (uint32_t& w : words) w = rng.next_uint32();
    EXPECT_EQ(bytes_of(words.data(), words.size() * 4),
              testing::read_text(dir.file("raw_" + std::to_string(seed) + ".bin")))
        << "seed " << seed;
  }
}

TEST(NumpyRandomState, RandomSampleMatchesBitForBit) {
  TempDir dir;
  run_numpy(dir, R"(
for seed in [1, 2, 77]:
    rs = np.random.RandomState(seed)
    a = rs.random_sample(size=(700,))
    b = np.array(rs.random_sample())  # a scalar draw continues the same stream
    c = rs.random_sample(size=(3, 5))
    open(f'{OUT}/rs_{seed}.bin', 'wb').write(a.tobytes() + b.tobytes() + c.tobytes())
)");
  for (uint32_t seed : {1u, 2u, 77u}) {
    NumpyRandomState rng(seed);
    std::vector<double> values(700 + 1 + 15);
    rng.random_sample_fill(values.data(), 700);
    values[700] = rng.random_sample();
    rng.random_sample_fill(values.data() + 701, 15);
    EXPECT_EQ(bytes_of(values.data(), values.size() * 8),
              testing::read_text(dir.file("rs_" + std::to_string(seed) + ".bin")))
        << "seed " << seed;
  }
}

struct RandintCase {
  DataType dtype;
  const char* numpy_dtype;
  int64_t low, high;  // NumPy's exclusive high
  int count;
};

// Ranges chosen to exercise every branch: empty span (no draws), spans with tight and loose
// masks, the full width of each type, and 64-bit spans above and below 2^32. Odd counts check
// that 8/16-bit and bool pieces are taken from the 32-bit word in NumPy's order.
const std::vector<RandintCase> kRandintCases = {
    {DataType::kBool, "bool", 0, 2, 77},
    {DataType::kBool, "bool", 1, 2, 9},
    {DataType::kInt8, "int8", -128, 128, 33},
    {DataType::kInt8, "int8", -5, 3, 31},
    {DataType::kUInt8, "uint8", 0, 256, 17},
    {DataType::kUInt8, "uint8", 7, 8, 5},
    {DataType::kUInt8, "uint8", 3, 200, 41},
    {DataType::kInt16, "int16", -32768, 32768, 13},
    {DataType::kInt16, "int16", -300, 5001, 27},
    {DataType::kUInt16, "uint16", 0, 65536, 11},
    {DataType::kUInt16, "uint16", 100, 40000, 19},
    {DataType::kInt32, "int32", INT32_MIN, INT64_C(2147483648), 25},
    {DataType::kInt32, "int32", 0, 2, 40},
    {DataType::kInt32, "int32", -1000, 1000001, 21},
    {DataType::kUInt32, "uint32", 0, INT64_C(4294967296), 15},
    {DataType::kUInt32, "uint32", 10, INT64_C(4000000000), 15},
    {DataType::kInt64, "int64", 0, 2, 30},
    {DataType::kInt64, "int64", -1000000, 1000001, 30},
    {DataType::kInt64, "int64", -INT64_C(4000000000), INT64_C(4000000000), 30},
    {DataType::kInt64, "int64", INT64_MIN, INT64_MAX, 30},
    {DataType::kUInt64, "uint64", 0, INT64_C(4294967296), 12},
    {DataType::kUInt64, "uint64", 5, INT64_C(1) << 62, 12},
};

std::string python_cases() {
  std::string s = "CASES = [\n";
  for (const RandintCase& c : kRandintCases)
    s += "    ('" + std::string(c.numpy_dtype) + "', " + std::to_string(c.low) + ", " +
         std::to_string(c.high) + ", " + std::to_string(c.count) + "),\n";
  return s + "]\n";
}

template <typename T>
std::string draw_bytes(NumpyRandomState& rng, const RandintCase& c) {
  std::vector<T> values(c.count);
  const uint64_t off = static_cast<uint64_t>(c.low);
  rng.bounded_fill(c.dtype, off, static_cast<uint64_t>(c.high - 1) - off, values.data(),
                   values.size());
  return bytes_of(values.data(), values.size() * sizeof(T));
}

std::string draw_case(NumpyRandomState& rng, const RandintCase& c) {
  switch (c.dtype) {
    case DataType::kBool: {
      std::unique_ptr<bool[]> values(new bool[c.count]);
      const uint64_t off = static_cast<uint64_t>(c.low);
      rng.bounded_fill(c.dtype, off, static_cast<uint64_t>(c.high - 1) - off, values.get(),
                       c.count);
      return bytes_of(values.get(), c.count);  // NumPy's bools are bytes 0 and 1, as C++'s
    }
    case DataType::kInt8:
      return draw_bytes<int8_t>(rng, c);
    case DataType::kUInt8:
      return draw_bytes<uint8_t>(rng, c);
    case DataType::kInt16:
      return draw_bytes<int16_t>(rng, c);
    case DataType::kUInt16:
      return draw_bytes<uint16_t>(rng, c);
    case DataType::kInt32:
      return draw_bytes<int32_t>(rng, c);
    case DataType::kUInt32:
      return draw_bytes<uint32_t>(rng, c);
    case DataType::kInt64:
      return draw_bytes<int64_t>(rng, c);
    default:
      return draw_bytes<uint64_t>(rng, c);
  }
}

TEST(NumpyRandomState, BoundedFillMatchesRandintForEveryDtype) {
  TempDir dir;
  // One RandomState serves all cases in order, so a wrong number of draws in any case also
  // shows up in every case after it.
  run_numpy(dir, python_cases() + R"(
for seed in [1, 31337]:
    rs = np.random.RandomState(seed)
    for k, (dtype, low, high, count) in enumerate(CASES):
        a = rs.randint(low, high, size=(count,), dtype=dtype)
        open(f'{OUT}/ri_{seed}_{k}.bin', 'wb').write(a.tobytes())
)");
  for (uint32_t seed : {1u, 31337u}) {
    NumpyRandomState rng(seed);
    for (size_t k = 0; k < kRandintCases.size(); ++k) {
      EXPECT_EQ(draw_case(rng, kRandintCases[k]),
                testing::read_text(
                    dir.file("ri_" + std::to_string(seed) + "_" + std::to_string(k) + ".bin")))
          << "seed " << seed << ", case " << k << " (" << kRandintCases[k].numpy_dtype << " ["
          << kRandintCases[k].low << ", " << kRandintCases[k].high << "))";
    }
  }
}

TEST(NumpyRandomState, ScalarRandintTakesAFreshWordEachCall) {
  TempDir dir;
  // A scalar draw of a small type does not reuse the rest of the previous call's word.
  run_numpy(dir, R"(
rs = np.random.RandomState(9)
calls = [('int8', -5, 9), ('uint8', 0, 9), ('int16', -5, 9), ('bool', 0, 2), ('int32', -5, 9),
         ('int64', -5, 9), ('uint64', 0, 2**62)] * 3
vals = [int(rs.randint(low, high, dtype=d)) for d, low, high in calls]
open(f'{OUT}/scalar.txt', 'w').write(' '.join(map(str, vals)))
)");
  struct Call {
    DataType dtype;
    int64_t low, high;
  };
  const std::vector<Call> calls = {{DataType::kInt8, -5, 9},
                                   {DataType::kUInt8, 0, 9},
                                   {DataType::kInt16, -5, 9},
                                   {DataType::kBool, 0, 2},
                                   {DataType::kInt32, -5, 9},
                                   {DataType::kInt64, -5, 9},
                                   {DataType::kUInt64, 0, INT64_C(1) << 62}};
  NumpyRandomState rng(9);
  std::string got;
  for (int round = 0; round < 3; ++round)
    for (const Call& c : calls) {
      if (!got.empty()) got += ' ';
      got += std::to_string(rng.randint(c.low, c.high, c.dtype));
    }
  EXPECT_EQ(got, testing::read_text(dir.file("scalar.txt")));
}

TEST(NumpyRandomState, RandintRejectsWhatNumpyRejects) {
  TempDir dir;
  run_numpy(dir, R"(
rs = np.random.RandomState(1)
for d, low, high in [('uint8', -1, 5), ('int8', 0, 129), ('int32', 5, 5), ('bool', 0, 3)]:
    try:
        rs.randint(low, high, dtype=d)
    except ValueError:
        continue
    raise SystemExit(f'numpy accepted {d} [{low}, {high})')
)");
  NumpyRandomState rng(1);
  EXPECT_THROW(rng.randint(-1, 5, DataType::kUInt8), Error);
  EXPECT_THROW(rng.randint(0, 129, DataType::kInt8), Error);
  EXPECT_THROW(rng.randint(5, 5, DataType::kInt32), Error);
  EXPECT_THROW(rng.randint(0, 3, DataType::kBool), Error);
  EXPECT_THROW(rng.randint(0, 3, DataType::kFloat32), Error);
}

}  // namespace
}  // namespace parity
