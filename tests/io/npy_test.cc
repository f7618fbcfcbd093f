#include "io/npy.h"

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "io/io_test_helpers.h"

namespace parity::io {
namespace {

using testing::python_in;
using testing::read_text;
using testing::TempDir;
using testing::write_text;

Shape parse_shape(const std::string& text) {
  Shape s;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ','))
    if (!part.empty()) s.push_back(std::stoll(part));
  return s;
}

// An .npy file with a hand-written header dict, for malformed-input tests.
std::string npy_with_header(const std::string& dict, const std::string& data = "") {
  std::string h = dict + "\n";
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(h.size() & 0xFF);
  out += static_cast<char>(h.size() >> 8);
  return out + h + data;
}

// Arrays of every NumPy dtype Parity has, in many shapes (zero-sized ones with long
// dimensions too, which move the header across the 64-byte padding boundaries), saved by
// np.save: each must decode to its dtype and shape and re-encode to exactly the same bytes.
TEST(Npy, DecodesAndReencodesNumpySaveByteForByte) {
  TempDir dir;
  ASSERT_TRUE(python_in(dir, R"(
rng = np.random.default_rng(5)
shapes = [(), (0,), (3,), (2, 3), (0, 5), (2, 3, 4), (1000,), (7,) + (1,) * 30 + (9,),
          (0, 123456789012345), (5, 0, 99999999999, 7), (1, 2, 0, 10**16), (3, 1, 1, 0)]
names = []
for dt in ['float32', 'float64', 'float16', 'int8', 'int16', 'int32', 'int64', 'uint8',
           'uint16', 'uint32', 'uint64', 'bool', 'complex64', 'complex128']:
    for i, shape in enumerate(shapes):
        n = int(np.prod(shape, dtype=object))
        if dt == 'bool':
            a = rng.integers(0, 2, n).astype(bool)
        elif dt.startswith('complex'):
            a = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dt)
        elif dt.startswith('float'):
            a = (rng.standard_normal(n) * 1000).astype(dt)
        else:
            info = np.iinfo(dt)
            a = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        name = f'{dt}_{i}'
        np.save(f'{D}/{name}.npy', a.reshape(shape))
        names.append(f"{name} {dt} {','.join(map(str, shape))}")
open(D + '/manifest.txt', 'w').write('\n'.join(names) + '\n')
)"));
  std::ifstream manifest(dir.file("manifest.txt"));
  std::string line;
  int count = 0;
  while (std::getline(manifest, line)) {
    std::stringstream ss(line);
    std::string name, dtype, shape;
    ss >> name >> dtype >> shape;
    std::string bytes = read_text(dir.file(name + ".npy"));
    Tensor t = npy_decode(bytes);
    EXPECT_EQ(dtype_name(t.dtype()), dtype) << name;
    EXPECT_EQ(t.shape(), parse_shape(shape)) << name;
    EXPECT_EQ(npy_encode(t), bytes) << name;
    ++count;
  }
  EXPECT_EQ(count, 14 * 12);
}

// Everything NumPy may write for the same values: Fortran order, big-endian, '=' byte order,
// header versions 2.0 and 3.0; all decode to the plain C-order little-endian array.
TEST(Npy, ReadsEveryLayoutNumpyWrites) {
  TempDir dir;
  ASSERT_TRUE(python_in(dir, R"(
rng = np.random.default_rng(6)
a = rng.standard_normal((3, 4, 5)).astype(np.float32)
np.save(D + '/c.npy', a)
np.save(D + '/f.npy', np.asfortranarray(a))
np.save(D + '/be.npy', a.astype('>f4'))
np.save(D + '/bef.npy', np.asfortranarray(a.astype('>f4')))
for v in [(2, 0), (3, 0)]:
    with open(f'{D}/v{v[0]}.npy', 'wb') as f:
        np.lib.format.write_array(f, a, version=v)
b = rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))
np.save(D + '/c16.npy', b)
np.save(D + '/bec16.npy', b.astype('>c16'))
i = rng.integers(-2**40, 2**40, (4, 6))
np.save(D + '/i8.npy', i)
np.save(D + '/bei8f.npy', np.asfortranarray(i.astype('>i8')))
)"));
  Tensor c = load_npy(dir.file("c.npy"));
  for (const char* f : {"f.npy", "be.npy", "bef.npy", "v2.npy", "v3.npy"})
    EXPECT_TRUE(load_npy(dir.file(f)).equals(c)) << f;
  EXPECT_TRUE(load_npy(dir.file("bec16.npy")).equals(load_npy(dir.file("c16.npy"))));
  EXPECT_TRUE(load_npy(dir.file("bei8f.npy")).equals(load_npy(dir.file("i8.npy"))));

  // '=' (native) and '|' byte-order marks: same header length, so the file stays valid.
  std::string bytes = read_text(dir.file("c.npy"));
  for (const char* mark : {"'=f4'", "'|f4'"}) {
    std::string edited = bytes;
    edited.replace(edited.find("'<f4'"), 5, mark);
    EXPECT_TRUE(npy_decode(edited).equals(c)) << mark;
  }
}

// Unicode arrays are UTF-32 in .npy and UTF-8 in Parity; NumPy drops trailing NULs.
TEST(Npy, UnicodeStringsBothWays) {
  TempDir dir;
  ASSERT_TRUE(python_in(dir, R"(
s = np.array([['ab', 'c\u00e9\U0001F600'], ['', 'x\x00y']])
np.save(D + '/s.npy', s)
np.save(D + '/sf.npy', np.asfortranarray(s))
np.save(D + '/sbe.npy', s.astype('>U3'))
np.save(D + '/s1.npy', np.array(['', '']))
np.save(D + '/bytes.npy', np.array([b'ab', b'\xff\x00c', b'']))
json.dump({'s': s.ravel().tolist()}, open(D + '/s.json', 'w'))
)"));
  auto expected = nlohmann::json::parse(read_text(dir.file("s.json")))["s"];
  std::string bytes = read_text(dir.file("s.npy"));
  Tensor s = npy_decode(bytes);
  ASSERT_EQ(s.dtype(), DataType::kString);
  ASSERT_EQ(s.shape(), (Shape{2, 2}));
  for (size_t i = 0; i < 4; ++i)
    EXPECT_EQ(s.data<std::string>()[i], expected[i].get<std::string>()) << i;
  EXPECT_EQ(npy_encode(s), bytes);
  EXPECT_TRUE(load_npy(dir.file("sf.npy")).equals(s));
  EXPECT_TRUE(load_npy(dir.file("sbe.npy")).equals(s));
  // All-empty strings are '<U1', NumPy's narrowest.
  std::string empty = read_text(dir.file("s1.npy"));
  EXPECT_EQ(npy_encode(npy_decode(empty)), empty);
  Tensor b = load_npy(dir.file("bytes.npy"));
  EXPECT_EQ(b.data<std::string>()[1], std::string("\xff\x00"
                                                  "c",
                                                  3));
  EXPECT_EQ(b.data<std::string>()[2], "");
  // Text that is not UTF-8 cannot become UTF-32.
  auto bad = Tensor::from_vector<std::string>({1}, {"\xff"});
  EXPECT_THROW(npy_encode(bad), Error);
}

TEST(Npy, RefusesTypesNumpyCannotHold) {
  for (DataType t :
       {DataType::kBFloat16, DataType::kFloat8E4M3FN, DataType::kFloat8E4M3FNUZ,
        DataType::kFloat8E5M2, DataType::kFloat8E5M2FNUZ, DataType::kInt4, DataType::kUInt4}) {
    try {
      npy_encode(Tensor(t, {2}));
      ADD_FAILURE() << "no error for " << dtype_name(t);
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string(dtype_name(t))), std::string::npos)
          << e.what();
    }
  }
  EXPECT_THROW(npy_encode(Tensor()), Error);
}

TEST(Npy, TruncatedAndCorruptedInputNeverCrashes) {
  Tensor t = Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  std::string bytes = npy_encode(t);
  for (size_t n = 0; n < bytes.size(); ++n)
    EXPECT_THROW(npy_decode(bytes.substr(0, n)), Error) << n;
  std::mt19937 rng(11);
  int decoded = 0, rejected = 0;
  for (int i = 0; i < 5000; ++i) {
    std::string b = bytes;
    int flips = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < flips; ++k) b[rng() % 128] = static_cast<char>(rng());
    try {
      npy_decode(b);
      ++decoded;
    } catch (const Error&) {
      ++rejected;
    }
  }
  EXPECT_GT(rejected, 0);
  EXPECT_EQ(decoded + rejected, 5000);
}

TEST(Npy, MalformedHeadersAreErrors) {
  std::string four_floats(16, '\0');
  const char* bad[] = {
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000, 1000000000000), }",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }",
      "{'descr': '<f4', 'fortran_order': False, }",
      "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (4,), }",
      "{'descr': '<f3', 'fortran_order': False, 'shape': (4,), }",
      "{'descr': '<V2', 'fortran_order': False, 'shape': (4,), }",
      "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (4,), }",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'extra': 1}",
      "{'descr': '<f4, 'fortran_order': False, 'shape': (4,), }",
      "{'descr': '<U0', 'fortran_order': False, 'shape': (4,), }",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }",  // 20 bytes needed
      "['descr']",
  };
  for (const char* h : bad) {
    try {
      npy_decode(npy_with_header(h, four_floats));
      ADD_FAILURE() << "accepted " << h;
    } catch (const Error& e) {
      EXPECT_TRUE(std::string(e.what()).starts_with("failed to read .npy")) << e.what();
    }
  }
  // The same header, well formed, is accepted (Python 2 'L' suffixes too).
  EXPECT_EQ(
      npy_decode(npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 2L), }",
                                 four_floats))
          .shape(),
      (Shape{2, 2}));
  std::string v9 = npy_encode(Tensor(DataType::kFloat32, {1}));
  v9[6] = 9;
  EXPECT_THROW(npy_decode(v9), Error);
}

TEST(Npy, FilesAndPathErrors) {
  TempDir dir;
  Tensor t = Tensor::from_vector<int64_t>({3}, {1, -2, 3});
  save_npy(dir.file("t.npy"), t);
  EXPECT_TRUE(load_npy(dir.file("t.npy")).equals(t));
  try {
    load_npy(dir.file("missing.npy"));
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(dir.file("missing.npy")), std::string::npos);
  }
  write_text(dir.file("junk.npy"), "not numpy");
  try {
    load_npy(dir.file("junk.npy"));
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(dir.file("junk.npy")), std::string::npos);
  }
}

}  // namespace
}  // namespace parity::io
