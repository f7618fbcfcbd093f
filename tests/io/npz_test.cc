#include <gtest/gtest.h>

#include <random>

#include "io/io_test_helpers.h"
#include "io/json.h"
#include "io/npy.h"

namespace parity::io {
namespace {

using testing::python_in;
using testing::read_text;
using testing::TempDir;

// Archives from np.savez (stored, ZIP64 local headers) and np.savez_compressed (deflated),
// with keyword and positional names; each member must equal the array NumPy saved alone.
TEST(Npz, ReadsNumpySavezAndSavezCompressed) {
  TempDir dir;
  ASSERT_TRUE(python_in(dir, R"(
rng = np.random.default_rng(9)
arrays = {
    'logits': rng.standard_normal((4, 1000)).astype(np.float32),
    'ids': rng.integers(0, 50000, (2, 7)),
    'mask': rng.integers(0, 2, (3, 3)).astype(bool),
    'zeros': np.zeros((1000, 100), np.float16),   # compresses very well
    'scalar': np.array(2.5),
    'empty': np.zeros((0, 3), np.int8),
    'text': np.array(['a', 'b\u00e9']),
}
for k, v in arrays.items():
    np.save(f'{D}/{k}.npy', v)
np.savez(D + '/stored.npz', **arrays)
np.savez_compressed(D + '/deflated.npz', **arrays)
np.savez(D + '/positional.npz', arrays['ids'], arrays['mask'])
)"));
  const std::vector<std::string> names = {"logits", "ids",   "mask", "zeros",
                                          "scalar", "empty", "text"};
  for (const char* file : {"stored.npz", "deflated.npz"}) {
    std::string bytes = read_text(dir.file(file));
    ASSERT_TRUE(is_npz(bytes));
    auto arrays = npz_decode(bytes);
    ASSERT_EQ(arrays.size(), names.size()) << file;
    for (size_t i = 0; i < names.size(); ++i) {
      EXPECT_EQ(arrays[i].first, names[i]) << file;
      EXPECT_TRUE(arrays[i].second.equals(load_npy(dir.file(names[i] + ".npy"))))
          << file << " " << names[i];
    }
  }
  auto positional = npz_decode(read_text(dir.file("positional.npz")));
  ASSERT_EQ(positional.size(), 2u);
  EXPECT_EQ(positional[0].first, "arr_0");
  EXPECT_EQ(positional[1].first, "arr_1");
  EXPECT_TRUE(positional[1].second.equals(load_npy(dir.file("mask.npy"))));
  EXPECT_FALSE(is_npz(read_text(dir.file("mask.npy"))));
}

// Our archives load in NumPy with the same names, order and values.
TEST(Npz, NumpyLoadsWhatWeWrite) {
  TempDir dir;
  std::vector<std::pair<std::string, Tensor>> arrays = {
      {"a", Tensor::from_vector<float>({2, 2}, {1.5f, -2, 0, 1e30f})},
      {"b", Tensor::from_vector<int32_t>({3}, {7, -8, 9})},
      {"c", Tensor::from_vector<std::string>({2}, {"x", "\xc3\xa9t\xc3\xa9"})},
      {"d", Tensor::scalar<bool>(true)},
  };
  write_file(dir.file("ours.npz"), npz_encode(arrays));
  EXPECT_TRUE(python_in(dir, R"(
z = np.load(D + '/ours.npz', allow_pickle=False)
assert list(z.keys()) == ['a', 'b', 'c', 'd'], list(z.keys())
assert z['a'].dtype == np.float32 and z['a'].tolist() == [[1.5, -2.0], [0.0, np.float32(1e30)]]
assert z['b'].dtype == np.int32 and z['b'].tolist() == [7, -8, 9]
assert z['c'].tolist() == ['x', '\u00e9t\u00e9'], z['c']
assert z['d'].dtype == bool and z['d'].shape == () and z['d']
import zipfile
assert zipfile.ZipFile(D + '/ours.npz').testzip() is None
)"));
  auto back = npz_decode(npz_encode(arrays));
  ASSERT_EQ(back.size(), arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    EXPECT_EQ(back[i].first, arrays[i].first);
    EXPECT_TRUE(back[i].second.equals(arrays[i].second));
  }
  EXPECT_TRUE(npz_decode(npz_encode({})).empty());
}

TEST(Npz, DamagedArchivesAreErrors) {
  TempDir dir;
  ASSERT_TRUE(python_in(dir, R"(
a = np.arange(300, dtype=np.float64).reshape(10, 30)
np.savez(D + '/s.npz', a=a, b=a[:2])
np.savez_compressed(D + '/d.npz', a=a, b=a[:2])
)"));
  for (const char* file : {"s.npz", "d.npz"}) {
    std::string bytes = read_text(dir.file(file));
    ASSERT_EQ(npz_decode(bytes).size(), 2u);
    for (size_t n = 0; n < bytes.size(); n += 7)
      EXPECT_THROW(npz_decode(bytes.substr(0, n)), Error) << file << " " << n;
    // Corrupted bytes anywhere: an error, or (in padding or names) a successful read.
    std::mt19937 rng(3);
    for (int i = 0; i < 2000; ++i) {
      std::string b = bytes;
      b[rng() % b.size()] = static_cast<char>(rng());
      try {
        npz_decode(b);
      } catch (const Error&) {
      }
    }
    // A flipped data byte is caught by the CRC.
    std::string b = bytes;
    size_t data = b.size() / 3;  // inside the first member's data
    b[data] = static_cast<char>(b[data] ^ 0x55);
    EXPECT_THROW(npz_decode(b), Error) << file;
  }
}

}  // namespace
}  // namespace parity::io
