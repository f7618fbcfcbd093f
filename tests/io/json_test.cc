#include "io/json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "io/base64.h"
#include "io/io_test_helpers.h"
#include "io/npy.h"

namespace parity::io {
namespace {

using testing::python_in;
using testing::read_text;
using testing::TempDir;
using testing::write_text;

// Python that builds Polygraphy's objects exactly as its encoders do (json/serde.py and
// comparator/struct.py): payload keys first, "polygraphy_class" last.
const char* kPolygraphyEncoders = R"(
def npy_bytes(a):
    f = io.BytesIO()
    np.save(f, a, allow_pickle=False)
    return f.getvalue()
def nd(a):
    return {'array': base64.b64encode(npy_bytes(a)).decode(), 'polygraphy_class': 'ndarray'}
def lazy(a):
    return {'values': nd(a), 'polygraphy_class': 'LazyArray'}
def iteration(outputs, runtime, runner):
    return {'outputs': {k: lazy(v) for k, v in outputs.items()}, 'runtime': runtime,
            'runner_name': runner, 'polygraphy_class': 'IterationResult'}
def run_results(lst):
    return {'lst': lst, 'polygraphy_class': 'RunResults'}
def dumps(obj):
    return json.dumps(obj, indent=4)
# Polygraphy's decoder for arrays, to check what we write.
def load_nd(dct):
    assert list(dct.keys())[-1] == 'polygraphy_class' and dct['polygraphy_class'] == 'ndarray'
    return np.load(io.BytesIO(base64.b64decode(dct['array'].encode(), validate=True)),
                   allow_pickle=False)
)";

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// A run-results file written the way Polygraphy writes one: read, checked against the arrays
// NumPy saved, and written back identically.
TEST(Json, ReadsPolygraphyRunResultsAndWritesThemBackIdentically) {
  TempDir dir;
  ASSERT_TRUE(python_in(dir, std::string(kPolygraphyEncoders) + R"(
rng = np.random.default_rng(1)
r0 = 'onnxrt-runner-N0-11/30/26-06:47:10'
r1 = 'pluginref \u00e9\U0001F600 "quoted" \\ tab\t\x7f'
def arrays(tag):
    out = {'logits': rng.standard_normal((2, 5)).astype(np.float32),
           'ids \u00fc': rng.integers(-9, 9, (3,)),
           'flag': np.array(True),
           'half': rng.standard_normal((2, 2)).astype(np.float16)}
    for i, v in enumerate(out.values()):
        np.save(f'{D}/{tag}_{i}.npy', v)
    return out
lst = [[r0, [iteration(arrays('a0'), 0.0123, r0), iteration(arrays('a1'), None, r0)]],
       [r1, [iteration(arrays('b0'), 1e-05, r1)]],
       ['no iterations', []],
       [r0, [iteration({}, 2.0, r0)]]]
open(D + '/results.json', 'w').write(dumps(run_results(lst)))
)"));
  RunResults results = load_run_results(dir.file("results.json"));
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(results[0].first, "onnxrt-runner-N0-11/30/26-06:47:10");
  EXPECT_EQ(results[1].first, "pluginref \xc3\xa9\xf0\x9f\x98\x80 \"quoted\" \\ tab\t\x7f");
  EXPECT_EQ(results[3].first, results[0].first);  // duplicates are kept
  EXPECT_TRUE(results[2].second.empty());
  const auto& its = results[0].second;
  ASSERT_EQ(its.size(), 2u);
  EXPECT_EQ(its[0].runtime, 0.0123);
  EXPECT_EQ(its[1].runtime, std::nullopt);
  EXPECT_EQ(results[1].second[0].runtime, 1e-05);
  EXPECT_EQ(its[0].runner_name, results[0].first);
  EXPECT_EQ(its[0].outputs.names(),
            (std::vector<std::string>{"logits", "ids \xc3\xbc", "flag", "half"}));
  for (auto [tag, it] :
       {std::pair{"a0", &its[0]}, std::pair{"a1", &its[1]}, std::pair{"b0", &results[1].second[0]}})
    for (size_t i = 0; i < it->outputs.size(); ++i)
      EXPECT_TRUE(
          it->outputs[i].second.equals(load_npy(dir.file(fmt::format("{}_{}.npy", tag, i)))))
          << tag << " " << it->outputs[i].first;
  EXPECT_TRUE(results[3].second[0].outputs.empty());
  EXPECT_EQ(run_results_to_json(results), read_text(dir.file("results.json")));
}

// Results made in C++ with every dtype NumPy has (and strings), and runtimes that exercise
// Python's float formatting: our file equals Polygraphy's encoding of the same data byte for
// byte, and Polygraphy's decoding of our file gives the same arrays.
TEST(Json, WriterMatchesPythonByteForByte) {
  TempDir dir;
  RunResults results;
  nlohmann::ordered_json meta = nlohmann::ordered_json::array();
  std::vector<std::optional<double>> runtimes = {
      0.1,         1e-05, 1.5e-07, 1e16,         1e15,
      123456789.0, -0.0,  5e-324,  std::nullopt, 0.30000000000000004};
  int file = 0;
  for (int r = 0; r < 2; ++r) {
    std::string runner = r == 0 ? "trt-runner" : "\xe2\x82\xac runner\n";
    std::vector<IterationResult> iterations;
    nlohmann::ordered_json jr = {{"name", runner}, {"iterations", nlohmann::json::array()}};
    for (size_t i = 0; i < runtimes.size() / 2; ++i) {
      IterationResult it;
      it.runner_name = runner;
      it.runtime = runtimes[r * runtimes.size() / 2 + i];
      nlohmann::ordered_json outputs = nlohmann::ordered_json::array();
      for (int t = 1; t <= 15; ++t) {
        auto dtype = static_cast<DataType>(t);
        if (t != 8 && !dtype_numpy_descr(dtype)) continue;
        Shape shape = (t + static_cast<int>(i)) % 3 == 0 ? Shape{} : Shape{2, 3};
        Tensor tensor(dtype, shape);
        auto* bytes = static_cast<uint8_t*>(tensor.raw_data());
        if (dtype == DataType::kString) {
          for (int64_t k = 0; k < tensor.numel(); ++k)
            tensor.data<std::string>()[k] = std::string(static_cast<size_t>(k), 'x') + "\xc3\xa9";
        } else {
          for (size_t k = 0; k < tensor.nbytes(); ++k)
            bytes[k] = dtype == DataType::kBool ? (k % 2) : static_cast<uint8_t>(k * 37 + t + i);
          if (dtype == DataType::kFloat16)  // avoid NaN patterns, whose payloads NumPy keeps
            for (int64_t k = 0; k < tensor.numel(); ++k) tensor.data<float16>()[k].bits &= 0x3FFF;
        }
        std::string name = fmt::format("out_{}", dtype_name(dtype));
        std::string path = dir.file(fmt::format("{}.npy", file++));
        save_npy(path, tensor);
        it.outputs.set(name, tensor);
        outputs.push_back({name, path});
      }
      jr["iterations"].push_back(
          {{"runtime", it.runtime ? nlohmann::json(*it.runtime) : nlohmann::json()},
           {"outputs", outputs}});
      iterations.push_back(std::move(it));
    }
    meta.push_back(jr);
    results.add(std::move(iterations), runner);
  }
  write_text(dir.file("meta.json"), meta.dump());
  save_run_results(dir.file("ours.json"), results);
  ASSERT_TRUE(python_in(dir, std::string(kPolygraphyEncoders) + R"(
meta = json.load(open(D + '/meta.json'))
lst = []
for r in meta:
    its = []
    for it in r['iterations']:
        outs = {name: np.load(path) for name, path in it['outputs']}
        its.append(iteration(outs, it['runtime'], r['name']))
    lst.append([r['name'], its])
open(D + '/expected.json', 'w').write(dumps(run_results(lst)))
ours = json.load(open(D + '/ours.json'))
for (name, its), r in zip(ours['lst'], meta):
    assert name == r['name']
    for it, m in zip(its, r['iterations']):
        assert it['runtime'] == m['runtime']
        for (k, v), (name, path) in zip(it['outputs'].items(), m['outputs']):
            a, b = load_nd(v['values']), np.load(path)
            assert k == name and a.dtype == b.dtype and a.shape == b.shape
            assert a.tobytes() == b.tobytes(), k
)"));
  EXPECT_EQ(read_text(dir.file("ours.json")), read_text(dir.file("expected.json")));
  RunResults back = load_run_results(dir.file("ours.json"));
  ASSERT_EQ(back.size(), results.size());
  for (size_t r = 0; r < back.size(); ++r)
    for (size_t i = 0; i < back[r].second.size(); ++i)
      for (const auto& [name, tensor] : results[r].second[i].outputs)
        EXPECT_TRUE(back[r].second[i].outputs.at(name).equals(tensor)) << name;
}

// Runtimes are Python floats: many doubles, written as json.dumps writes them.
TEST(Json, RuntimesFormatLikePythonRepr) {
  TempDir dir;
  ASSERT_TRUE(python_in(dir, std::string(kPolygraphyEncoders) + R"(
rng = np.random.default_rng(2)
x = rng.integers(0, 2**64, 3000, dtype=np.uint64).view(np.float64)
x = x[np.isfinite(x)]
special = [1e-4, 9.999e-05, 1e-5, 1e16, 9999999999999998.0, 1e22, 2.0**53, 2.0**63, 1.0, 0.5,
           1e300, 2.2250738585072014e-308, 1.7976931348623157e+308, 100.0, 0.001, 3.14159]
y = np.concatenate([x, np.array(special), rng.uniform(0, 1, 500), rng.uniform(0, 1e-3, 500),
                    np.round(rng.uniform(0, 1e6, 300), 3)])
y.tofile(D + '/runtimes.bin')
its = [iteration({}, float(v), 'r') for v in y]
open(D + '/expected.json', 'w').write(dumps(run_results([['r', its]])))
)"));
  std::string raw = read_text(dir.file("runtimes.bin"));
  std::vector<double> values(raw.size() / 8);
  std::memcpy(values.data(), raw.data(), values.size() * 8);
  ASSERT_GT(values.size(), 3000u);
  std::vector<IterationResult> its(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    its[i].runtime = values[i];
    its[i].runner_name = "r";
  }
  RunResults results;
  results.add(std::move(its), "r");
  std::string ours = run_results_to_json(results);
  std::string expected = read_text(dir.file("expected.json"));
  EXPECT_EQ(ours, expected);
  // Reading gives back the exact doubles.
  RunResults back = run_results_from_json(ours);
  for (size_t i = 0; i < values.size(); ++i) ASSERT_EQ(*back[0].second[i].runtime, values[i]);
}

// --save-inputs files: a list with one plain object of name -> ndarray per iteration.
TEST(Json, InputsBothWays) {
  TempDir dir;
  ASSERT_TRUE(python_in(dir, std::string(kPolygraphyEncoders) + R"(
rng = np.random.default_rng(4)
feeds = []
for i in range(3):
    feed = {'input_ids': rng.integers(0, 1000, (1, 8)),
            'pixel values': rng.standard_normal((1, 3, 2, 2)).astype(np.float32)}
    for j, v in enumerate(feed.values()):
        np.save(f'{D}/{i}_{j}.npy', v)
    feeds.append({k: nd(v) for k, v in feed.items()})
open(D + '/inputs.json', 'w').write(dumps(feeds))
open(D + '/none.json', 'w').write(dumps([]))
)"));
  auto feeds = load_inputs(dir.file("inputs.json"));
  ASSERT_EQ(feeds.size(), 3u);
  for (size_t i = 0; i < feeds.size(); ++i) {
    EXPECT_EQ(feeds[i].names(), (std::vector<std::string>{"input_ids", "pixel values"}));
    for (size_t j = 0; j < feeds[i].size(); ++j)
      EXPECT_TRUE(feeds[i][j].second.equals(load_npy(dir.file(fmt::format("{}_{}.npy", i, j)))));
  }
  EXPECT_EQ(inputs_to_json(feeds), read_text(dir.file("inputs.json")));
  EXPECT_TRUE(load_inputs(dir.file("none.json")).empty());
  EXPECT_EQ(inputs_to_json({}), read_text(dir.file("none.json")));
  save_inputs(dir.file("ours.json"), feeds);
  EXPECT_EQ(read_text(dir.file("ours.json")), read_text(dir.file("inputs.json")));
}

// Files from older Polygraphy versions: legacy type markers, the LazyNumpyArray name, arrays
// without a LazyArray wrapper, an .npz payload (its first array counts) and a payload that is
// the .npy bytes as latin-1 text instead of base64.
TEST(Json, ReadsLegacyEncodings) {
  TempDir dir;
  ASSERT_TRUE(python_in(dir, std::string(kPolygraphyEncoders) + R"(
MARK = 'polygraphy_serialized_json_type'
rng = np.random.default_rng(8)
a = rng.standard_normal((3, 4)).astype(np.float32)
b = rng.integers(0, 255, (5,), dtype=np.uint8)
c = np.array([[1.5, -2.5]])
for k, v in {'a': a, 'b': b, 'c': c}.items():
    np.save(f'{D}/{k}.npy', v)
npz = io.BytesIO()
np.savez_compressed(npz, first=b, second=a)
latin = npy_bytes(a).decode('latin-1')
assert any(ord(ch) > 127 for ch in latin)
def legacy(name, dct):
    return {'__polygraphy_encoded_' + name: MARK, **dct}
it = legacy('IterationResult', {
    'outputs': {
        'a': legacy('ndarray', {'array': latin}),
        'b': {'values': {'array': base64.b64encode(npz.getvalue()).decode(),
                         'polygraphy_class': 'ndarray'},
              'polygraphy_class': 'LazyNumpyArray'},
        'c': nd(c),
    },
    'runtime': 3,
    'runner_name': 'old-runner'})
open(D + '/legacy.json', 'w').write(dumps(legacy('RunResults', {'lst': [['old-runner', [it]]]})))
open(D + '/legacy_inputs.json', 'w').write(dumps([{'x': legacy('ndarray', {'array': latin})}]))
)"));
  RunResults results = load_run_results(dir.file("legacy.json"));
  ASSERT_EQ(results.size(), 1u);
  const IterationResult& it = results[0].second.at(0);
  EXPECT_EQ(it.runtime, 3.0);
  EXPECT_EQ(it.runner_name, "old-runner");
  EXPECT_TRUE(it.outputs.at("a").equals(load_npy(dir.file("a.npy"))));
  EXPECT_TRUE(it.outputs.at("b").equals(load_npy(dir.file("b.npy"))));
  EXPECT_TRUE(it.outputs.at("c").equals(load_npy(dir.file("c.npy"))));
  auto feeds = load_inputs(dir.file("legacy_inputs.json"));
  ASSERT_EQ(feeds.size(), 1u);
  EXPECT_TRUE(feeds[0].at("x").equals(load_npy(dir.file("a.npy"))));
}

// Payloads are decoded while the file is parsed and arrays viewed in the decoded buffer where
// their layout allows (numeric, little-endian, C order, aligned); every other layout takes the
// copying path. Each one is checked against the .npy NumPy wrote of the same array.
TEST(Json, DecodedPayloadsOfEveryLayoutEqualNumpy) {
  TempDir dir;
  ASSERT_TRUE(python_in(dir, std::string(kPolygraphyEncoders) + R"(
rng = np.random.default_rng(3)
arrays = {
    'f32': rng.standard_normal((4, 5)).astype(np.float32),
    'f64_big_endian': rng.standard_normal((3,)).astype('>f8'),
    'fortran': np.asfortranarray(rng.standard_normal((3, 4))),
    'bools': np.array([True, False, True]),
    'c64': (rng.standard_normal(3) + 1j * rng.standard_normal(3)).astype(np.complex64),
    'empty': np.zeros((0, 3), np.float32),
    'scalar': np.float64(2.5),
    'strings': np.array(['a', 'bcd']),
    'u8': rng.integers(0, 255, (7,), dtype=np.uint8),
}
for k, v in arrays.items():
    np.save(f'{D}/{k}.npy', np.array(v, order='C').astype(v.dtype.newbyteorder('=')))
outputs = {k: v for k, v in arrays.items()}
# An .npy whose data starts at an odd offset (a hand-made header): not aligned for float64.
raw = npy_bytes(arrays['f32'].astype(np.float64))
hlen = int.from_bytes(raw[8:10], 'little')
stripped = raw[10:10 + hlen].rstrip(b' \n')
header = stripped + b' ' * ((5 - (10 + len(stripped) + 1)) % 8) + b'\n'
assert (10 + len(header)) % 8 == 5
odd = raw[:8] + len(header).to_bytes(2, 'little') + header + raw[10 + hlen:]
np.save(f'{D}/unaligned.npy', arrays['f32'].astype(np.float64))
it = iteration({k: v for k, v in outputs.items()}, 1.0, 'r')
it['outputs']['unaligned'] = {'values': {'array': base64.b64encode(odd).decode(),
                                        'polygraphy_class': 'ndarray'},
                              'polygraphy_class': 'LazyArray'}
open(D + '/results.json', 'w').write(dumps(run_results([['r', [it]]])))
)"));
  RunResults results = load_run_results(dir.file("results.json"));
  const IterationResult& it = results[0].second.at(0);
  for (const char* name : {"f32", "f64_big_endian", "fortran", "bools", "c64", "empty", "scalar",
                           "strings", "u8", "unaligned"})
    EXPECT_TRUE(it.outputs.at(name).equals(load_npy(dir.file(std::string(name) + ".npy")))) << name;
}

// Valid base64 of something that is not an array: the message says both.
TEST(Json, DecodedPayloadThatIsNoArrayIsAnError) {
  const std::string text = R"({"lst": [["r", [{"outputs": {"x": {"array": ")" +
                           base64_encode("not an npy file") + R"(", "polygraphy_class":
      "ndarray"}}, "runtime": 1.0, "runner_name": "r", "polygraphy_class": "IterationResult"}]]],
      "polygraphy_class": "RunResults"})";
  const std::string message = error_of([&] { run_results_from_json(text); });
  EXPECT_NE(message.find("as base64"), std::string::npos) << message;
  EXPECT_NE(message.find("must be base64 of an .npy or .npz file"), std::string::npos) << message;
}

TEST(Json, UnknownClassesUsePolygraphysMessage) {
  const std::string message =
      "Could not decode serialized type: Tensor. This could be because a required module is "
      "missing.";
  std::string torch_output = R"({"lst": [["r", [{"outputs": {"x": {"tensor": "AAAA",
      "polygraphy_class": "Tensor"}}, "runtime": null, "runner_name": "r",
      "polygraphy_class": "IterationResult"}]]], "polygraphy_class": "RunResults"})";
  EXPECT_EQ(error_of([&] { run_results_from_json(torch_output); }), message);
  EXPECT_EQ(error_of([&] { run_results_from_json(R"({"polygraphy_class": "Tensor"})"); }), message);
  EXPECT_EQ(error_of([&] { inputs_from_json(R"([{"x": {"polygraphy_class": "Tensor"}}])"); }),
            message);
  EXPECT_EQ(error_of([&] {
              inputs_from_json(R"([{"x": {"__polygraphy_encoded_Tensor":
                                   "polygraphy_serialized_json_type"}}])");
            }),
            message);
}

TEST(Json, MalformedFilesAreErrors) {
  TempDir dir;
  // A file of the other kind, or of no kind.
  std::string inputs = inputs_to_json({});
  EXPECT_TRUE(error_of([&] { run_results_from_json(inputs); })
                  .starts_with("Provided JSON cannot be decoded into a RunResults.\nNote: JSON "
                               "was decoded into a <class 'list'>"));
  RunResults empty;
  EXPECT_NE(error_of([&] { inputs_from_json(run_results_to_json(empty)); }), "(no error)");
  const char* bad[] = {
      "{",
      R"({"lst": 3, "polygraphy_class": "RunResults"})",
      R"({"lst": [["r"]], "polygraphy_class": "RunResults"})",
      R"({"lst": [["r", [{"outputs": {}, "runtime": "fast", "runner_name": "r",
          "polygraphy_class": "IterationResult"}]]], "polygraphy_class": "RunResults"})",
      R"({"lst": [["r", [{"runtime": 1, "runner_name": "r",
          "polygraphy_class": "IterationResult"}]]], "polygraphy_class": "RunResults"})",
      R"({"lst": [["r", [{"outputs": {"x": {"array": "!!notbase64\u0100",
          "polygraphy_class": "ndarray"}}, "runtime": 1, "runner_name": "r",
          "polygraphy_class": "IterationResult"}]]], "polygraphy_class": "RunResults"})",
      R"({"lst": [["r", [{"outputs": {"x": {"array": "QUJD", "polygraphy_class": "ndarray"}},
          "runtime": 1, "runner_name": "r", "polygraphy_class": "IterationResult"}]]],
          "polygraphy_class": "RunResults"})",
      R"({"lst": [["r", [{"outputs": {"x": {"values": 1}}, "runtime": 1, "runner_name": "r",
          "polygraphy_class": "IterationResult"}]]], "polygraphy_class": "RunResults"})",
  };
  for (const char* text : bad) {
    write_text(dir.file("bad.json"), text);
    std::string e = error_of([&] { load_run_results(dir.file("bad.json")); });
    EXPECT_TRUE(e.starts_with("failed to load inference results from " + dir.file("bad.json")))
        << e;
  }
  // Truncations of a real file never crash.
  RunResults one;
  IterationResult it;
  it.outputs.set("x", Tensor::from_vector<float>({2}, {1, 2}));
  one.add({it}, "r");
  std::string good = run_results_to_json(one);
  for (size_t n = 0; n < good.size(); n += 5)
    EXPECT_THROW(run_results_from_json(good.substr(0, n)), Error) << n;
  // A bfloat16 output cannot be saved in Polygraphy's NumPy-based format.
  RunResults bf;
  IterationResult bit;
  bit.outputs.set("y", Tensor(DataType::kBFloat16, {2}));
  bf.add({bit}, "r");
  EXPECT_NE(error_of([&] { run_results_to_json(bf); }).find("bfloat16"), std::string::npos);
}

TEST(Json, FilesNamePathsAndWriteAtomically) {
  TempDir dir;
  std::string missing = dir.file("nowhere/results.json");
  EXPECT_NE(error_of([&] { load_run_results(missing); }).find(missing), std::string::npos);
  EXPECT_NE(error_of([&] { read_file(dir.path().string()); }).find(dir.path().string()),
            std::string::npos);
  EXPECT_NE(error_of([&] { write_file(missing, "x"); }).find(missing), std::string::npos);
  std::string path = dir.file("out.json");
  write_file(path, "first");
  write_file(path, "second");
  EXPECT_EQ(read_file(path), "second");
  // Writing over a directory fails and leaves no temporary file behind.
  std::filesystem::create_directory(dir.file("adir"));
  std::filesystem::create_directory(dir.file("adir/inner"));
  EXPECT_NE(error_of([&] { write_file(dir.file("adir"), "x"); }), "(no error)");
  size_t entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 2u);  // out.json and adir
}

TEST(Base64, MatchesPythonEncodeAndValidatingDecode) {
  TempDir dir;
  ASSERT_TRUE(python_in(dir, R"(
import binascii
rng = np.random.default_rng(3)
blobs = [bytes(rng.integers(0, 256, n, dtype=np.uint8)) for n in range(0, 40)]
open(D + '/blobs.bin', 'wb').write(b''.join(blobs))
open(D + '/b64.txt', 'w').write(''.join(base64.b64encode(b).decode() + '\n' for b in blobs))
odd = ['A', 'AB', 'ABC', 'AB=C', 'A===', 'AB C', 'Q!==', 'QQ', 'QQ=', 'QQ==', 'QUI', 'QUI=',
       'QUI==', 'QUJD=', 'QUJD==', 'QUJD===', 'QR==', '=', '==', '']
out = []
for s in odd:
    try:
        out.append([s, base64.b64decode(s, validate=True).hex()])
    except binascii.Error:
        out.append([s, None])
json.dump(out, open(D + '/odd.json', 'w'))
)"));
  std::string all = read_text(dir.file("blobs.bin"));
  std::ifstream lines(dir.file("b64.txt"));
  std::string line;
  size_t at = 0;
  for (size_t n = 0; n < 40; ++n) {
    ASSERT_TRUE(std::getline(lines, line));
    std::string blob = all.substr(at, n);
    at += n;
    EXPECT_EQ(base64_encode(blob), line) << n;
    EXPECT_EQ(base64_decode(line), blob) << n;
  }
  auto odd = nlohmann::json::parse(read_text(dir.file("odd.json")));
  ASSERT_EQ(odd.size(), 20u);
  for (const auto& c : odd) {
    auto got = base64_decode(c[0].get<std::string>());
    if (c[1].is_null()) {
      EXPECT_EQ(got, std::nullopt) << c[0];
    } else {
      ASSERT_TRUE(got.has_value()) << c[0];
      std::string hex;
      for (unsigned char ch : *got) hex += fmt::format("{:02x}", ch);
      EXPECT_EQ(hex, c[1].get<std::string>()) << c[0];
    }
  }
}

// Strings past the decoder's staging block and its progress reports (every 4 MiB of text):
// the bytes Python encoded come back, progress only grows and stays inside the text, and a
// stray character deep inside is still refused.
TEST(Base64, LargeTextDecodesAcrossStagingBlocksAndReportsProgress) {
  TempDir dir;
  ASSERT_TRUE(python_in(dir, R"(
blob = bytes(np.random.default_rng(5).integers(0, 256, 10 * 2**20 + 7, dtype=np.uint8))
open(D + '/blob.bin', 'wb').write(blob)
open(D + '/blob.b64', 'w').write(base64.b64encode(blob).decode())
)"));
  const std::string blob = read_text(dir.file("blob.bin"));
  std::string text = read_text(dir.file("blob.b64"));
  std::vector<size_t> reports;
  auto decoded = base64_decode(text, [&](size_t n) { reports.push_back(n); });
  ASSERT_TRUE(decoded.has_value());
  EXPECT_TRUE(*decoded == blob);
  ASSERT_GE(reports.size(), 3u);  // 14 MB of text
  for (size_t k = 0; k < reports.size(); ++k) {
    EXPECT_LT(reports[k], text.size());
    if (k > 0) EXPECT_GT(reports[k], reports[k - 1]);
  }
  text[9 << 20] = '!';
  EXPECT_EQ(base64_decode(text), std::nullopt);
}

// A results file with arrays larger than the parser's release step, loaded from the file (its
// text given back as it decodes): the arrays equal NumPy's; a file whose base64 breaks off deep
// inside an array is an error that says so, not a wrong array.
TEST(Json, LargeArraysLoadWhileTheirTextIsReleased) {
  TempDir dir;
  ASSERT_TRUE(python_in(dir, std::string(kPolygraphyEncoders) + R"(
rng = np.random.default_rng(9)
a = rng.standard_normal((3, 2**20)).astype(np.float32)
b = rng.standard_normal((5, 2**19)).astype(np.float64)
np.save(D + '/a.npy', a)
np.save(D + '/b.npy', b)
text = dumps(run_results([['r', [iteration({'a': a, 'b': b}, 1.0, 'r')]]]))
open(D + '/results.json', 'w').write(text)
at = text.index('"array": "') + 10 + 9 * 2**20
open(D + '/broken.json', 'w').write(text[:at] + '!' + text[at + 1:])
)"));
  RunResults results = load_run_results(dir.file("results.json"));
  const IterationResult& it = results[0].second.at(0);
  EXPECT_TRUE(it.outputs.at("a").equals(load_npy(dir.file("a.npy"))));
  EXPECT_TRUE(it.outputs.at("b").equals(load_npy(dir.file("b.npy"))));
  const std::string message = error_of([&] { load_run_results(dir.file("broken.json")); });
  EXPECT_NE(message.find("expected a base64 string under \"array\" that is base64 to its end"),
            std::string::npos)
      << message;
}

// The streamed writer (layer-wise --save-outputs) writes what the whole-file writer writes for
// the same results, byte for byte: runners interleaved as a layer-wise run produces them, an
// empty runner, names that need escaping. (The whole-file writer is checked against Polygraphy's
// encoders above.)
TEST(Json, StreamedResultsEqualTheWholeFileWriter) {
  TempDir dir;
  RunResults results;
  const std::vector<std::string> runners = {"pluginref-runner", "\xe2\x82\xac \"ort\"", "none"};
  for (size_t r = 0; r < runners.size(); ++r) {
    std::vector<IterationResult> iterations;
    for (int i = 0; r < 2 && i < 2; ++i) {
      IterationResult it;
      it.runner_name = runners[r];
      if (r == 1) it.runtime = 0.25 * i;
      for (int t = 0; t < 3; ++t) {
        Tensor x(t == 2 ? DataType::kFloat16 : DataType::kFloat32, {2, 3});
        auto* bytes = static_cast<uint8_t*>(x.raw_data());
        for (size_t k = 0; k < x.nbytes(); ++k) bytes[k] = static_cast<uint8_t>(k * 13 + r + i);
        it.outputs.set(fmt::format("t{}", t), x);
      }
      iterations.push_back(std::move(it));
    }
    results.add(std::move(iterations), runners[r]);
  }
  const std::string path = dir.file("streamed.json");
  {
    RunResultsStream out(path, runners.size());
    for (size_t r = 0; r < runners.size(); ++r) out.set_runner_name(r, runners[r]);
    for (int i = 0; i < 2; ++i) {
      for (size_t r = 0; r < 2; ++r) out.begin_iteration(r);
      for (int t = 0; t < 3; ++t)
        for (size_t r = 0; r < 2; ++r)
          out.add(r, fmt::format("t{}", t), results[r].second[i].outputs.at(fmt::format("t{}", t)));
      for (size_t r = 0; r < 2; ++r) out.end_iteration(r, results[r].second[i].runtime, runners[r]);
    }
    EXPECT_FALSE(std::filesystem::exists(path));  // nothing appears before finish()
    out.finish();
  }
  EXPECT_EQ(read_text(path), run_results_to_json(results));
}

}  // namespace
}  // namespace parity::io
