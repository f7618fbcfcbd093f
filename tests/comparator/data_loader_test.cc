// DataLoader against Polygraphy's: for a model-like set of inputs of every dtype NumPy holds,
// several seeds, iterations and value ranges, the generated feeds must equal, byte for byte,
// what NumPy produces with the calls Polygraphy's DataLoader makes (the Python below mirrors
// polygraphy/comparator/data_loader.py and runs at test time). The rest ports the cases of
// Polygraphy's tests/comparator/test_data_loader.py.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "comparator/data_loader.h"
#include "support/test_util.h"

namespace parity {
namespace {

using testing::LogCapture;
using testing::TempDir;

constexpr double kInf = std::numeric_limits<double>::infinity();

Dim F(int64_t v) { return Dim::fixed(v); }
Dim S(const std::string& name) { return Dim::symbolic(name); }

struct InputSpec {
  std::string name;
  std::optional<DataType> dtype;
  DimList dims;
};

TensorMetadata metadata_of(const std::vector<InputSpec>& inputs) {
  TensorMetadata m;
  for (const InputSpec& in : inputs) m.add(in.name, in.dtype, in.dims);
  return m;
}

// ---- the reference: NumPy called as Polygraphy calls it --------------------------------------

const char* kPolygraphyMirror = R"(
import math
import numpy as np

def feed_like_polygraphy(seed, inputs, val_range):
    # DataLoader.__getitem__: one RandomState(seed + index) for all inputs, in order.
    rng = np.random.RandomState(seed)
    feed = []
    for name, dtype, dims in inputs:
        shape = [1 if d is None else d for d in dims]  # util.override_dynamic_shape
        tup = val_range[name] if name in val_range else val_range.get('', (0.0, 1.0))
        tup = tuple(d if v is None else v for v, d in zip(tup, (0.0, 1.0)))
        dt = None if dtype is None else np.dtype(dtype)
        if dt is not None and (np.issubdtype(dt, np.integer) or dt == np.bool_):
            cast = int if np.issubdtype(dt, np.integer) else bool
            imin, imax = (cast(v) for v in tup)
            buf = np.array(rng.randint(low=imin, high=imax + 1, size=shape, dtype=dt))
        else:
            fmin, fmax = (float(v) for v in tup)
            scale, shift = fmax - fmin, fmin   # ArraySampler.sample_float
            if math.isinf(fmin):
                scale, shift = fmin, 0
            if math.isinf(fmax):
                scale = fmax
            with np.errstate(all='ignore'):
                buf = np.array((rng.random_sample(size=shape) * scale + shift).astype(dt))
        feed.append(buf)
    return feed

for cid, seed, iterations, inputs, val_range in CASES:
    for it in range(iterations):
        for k, arr in enumerate(feed_like_polygraphy(seed + it, inputs, val_range)):
            base = f'{OUT}/{cid}_{it}_{k}'
            open(base + '.bin', 'wb').write(arr.tobytes())
            open(base + '.txt', 'w').write(f'{arr.dtype} {list(arr.shape)}')
)";

struct Case {
  std::string id;
  uint32_t seed = 1;
  int iterations = 1;
  std::vector<InputSpec> inputs;  // as Polygraphy resolves them (model shape or user override)
  std::map<std::string, ValueRange> val_range;
  TensorMetadata model, user;  // what the DataLoader is given
};

std::string py_number(std::optional<double> v) {
  if (!v) return "None";
  if (std::isinf(*v)) return *v > 0 ? "float('inf')" : "-float('inf')";
  return fmt::format("{}", *v);  // shortest round-trip repr; Python reads it back exactly
}

std::string python_cases(const std::vector<Case>& cases) {
  std::string s = "CASES = [\n";
  for (const Case& c : cases) {
    std::vector<std::string> inputs, ranges;
    for (const InputSpec& in : c.inputs) {
      std::vector<std::string> dims;
      for (const Dim& d : in.dims) dims.push_back(d.is_fixed() ? std::to_string(d.value) : "None");
      std::string dtype = in.dtype ? fmt::format("'{}'", dtype_name(*in.dtype)) : "None";
      inputs.push_back(fmt::format("('{}', {}, [{}])", in.name, dtype, fmt::join(dims, ", ")));
    }
    for (const auto& [name, r] : c.val_range)
      ranges.push_back(fmt::format("'{}': ({}, {})", name, py_number(r.min), py_number(r.max)));
    s += fmt::format("    ('{}', {}, {}, [{}], {{{}}}),\n", c.id, c.seed, c.iterations,
                     fmt::join(inputs, ", "), fmt::join(ranges, ", "));
  }
  return s + "]\n";
}

void expect_matches_numpy(const std::vector<Case>& cases) {
  TempDir dir;
  std::string script =
      "OUT = r'" + dir.path().string() + "'\n" + python_cases(cases) + kPolygraphyMirror;
  testing::CommandResult r = testing::run_python(script);
  ASSERT_EQ(r.exit_code, 0) << r.output;

  for (const Case& c : cases) {
    DataLoaderOptions options;
    options.seed = c.seed;
    options.iterations = c.iterations;
    options.val_range = c.val_range;
    options.input_metadata = c.user;
    DataLoader loader(options);
    loader.set_input_metadata(c.model);
    for (int it = 0; it < c.iterations; ++it) {
      std::optional<TensorMap> feed = loader.get(it);
      ASSERT_TRUE(feed.has_value());
      ASSERT_EQ(feed->size(), c.inputs.size());
      for (size_t k = 0; k < c.inputs.size(); ++k) {
        const auto& [name, tensor] = (*feed)[k];
        std::string base = dir.file(fmt::format("{}_{}_{}", c.id, it, k));
        SCOPED_TRACE(fmt::format("case {}, iteration {}, input {}", c.id, it, name));
        EXPECT_EQ(name, c.inputs[k].name);
        std::string shape = fmt::format("[{}]", fmt::join(tensor.shape(), ", "));
        EXPECT_EQ(fmt::format("{} {}", dtype_name(tensor.dtype()), shape),
                  testing::read_text(base + ".txt"));
        std::string bytes(static_cast<const char*>(tensor.raw_data()), tensor.nbytes());
        EXPECT_TRUE(bytes == testing::read_text(base + ".bin")) << "the values differ";
      }
    }
  }
}

// Inputs like a real model's: every dtype NumPy holds, dynamic dims, a scalar, an empty tensor
// and an input whose dtype the model does not give.
const std::vector<InputSpec> kModelInputs = {
    {"image", DataType::kFloat32, {S("batch"), F(3), F(5), F(7)}},
    {"mask", DataType::kBool, {F(4), F(9)}},
    {"ids", DataType::kInt64, {F(2), F(13)}},
    {"small", DataType::kInt8, {F(3), F(11)}},
    {"u8", DataType::kUInt8, {F(17)}},
    {"i16", DataType::kInt16, {F(5), F(3)}},
    {"u16", DataType::kUInt16, {F(7)}},
    {"i32", DataType::kInt32, {F(6), F(6)}},
    {"u32", DataType::kUInt32, {F(9)}},
    {"u64", DataType::kUInt64, {F(4)}},
    {"wide", DataType::kInt64, {Dim::unknown(), F(6)}},
    {"half", DataType::kFloat16, {F(8), F(8)}},
    {"dbl", DataType::kFloat64, {F(10)}},
    {"scalar", DataType::kFloat32, {}},
    {"empty", DataType::kInt32, {F(0), F(3)}},
    {"untyped", std::nullopt, {F(3)}},
};

TEST(DataLoader, MatchesPolygraphyBitForBit) {
  std::vector<Case> cases;
  auto model_case = [&](std::string id, uint32_t seed, int iterations,
                        std::map<std::string, ValueRange> val_range) {
    Case c;
    c.id = std::move(id);
    c.seed = seed;
    c.iterations = iterations;
    c.inputs = kModelInputs;
    c.val_range = std::move(val_range);
    c.model = metadata_of(kModelInputs);
    cases.push_back(std::move(c));
  };
  // Default ranges: [0, 1] for every dtype, so integers are 0 or 1.
  model_case("defaults", 1, 3, {});
  // Per-input ranges: full widths, 64-bit spans above 2^32, constants (no draws), float16
  // overflow to inf, infinite bounds, and an empty tensor whose range NumPy never checks.
  model_case("per_input", 0, 2,
             {{"image", {-2.5, 3.25}},
              {"mask", {1, 1}},
              {"ids", {-1000000, 1000000}},
              {"small", {-128, 127}},
              {"u8", {3, 3}},
              {"i16", {-300, 5000}},
              {"u16", {0, 65535}},
              {"i32", {-2147483648.0, 2147483647.0}},
              {"u32", {10, 4000000000.0}},
              {"u64", {0, 1.8e19}},
              {"wide", {-9e18, 9e18}},
              {"half", {-70000, 70000}},
              {"dbl", {-kInf, kInf}},
              {"scalar", {-kInf, 0}},
              {"empty", {5, -5}},
              {"", {5, 5.5}}});
  // A default range for most inputs with truncated integer bounds, the largest seed NumPy
  // takes, and unset ends.
  model_case("default_key", 4294967293u, 3,
             {{"", {-3.7, 7.9}},
              {"mask", {0, 0.0}},
              {"u8", {0.5, 9.99}},
              {"u16", {2, 2}},
              {"u32", {0, 1}},
              {"u64", {7, 4294967302.0}},
              {"half", {kInf, kInf}},
              {"dbl", {0, kInf}},
              {"scalar", {std::nullopt, 4}},
              {"empty", {std::nullopt, std::nullopt}}});
  // User metadata: a shape override, a dtype override through a pattern, a partial override.
  {
    Case c;
    c.id = "overrides";
    c.seed = 12345;
    c.iterations = 2;
    c.inputs = kModelInputs;
    c.inputs[0].dims = {F(2), F(3), F(5), F(7)};
    c.inputs[4].dtype = DataType::kInt16;
    c.inputs[10].dims = {F(5), F(6)};
    c.val_range = {{"u8", {-7, 300}}};
    c.model = metadata_of(kModelInputs);
    c.user.add("image", std::nullopt, DimList{F(2), F(3), F(5), F(7)});
    c.user.add("u?", DataType::kInt16, std::nullopt);
    c.user.add("wide", std::nullopt, DimList{F(5), F(6)});
    cases.push_back(std::move(c));
  }
  LogCapture quiet(Severity::kError);
  expect_matches_numpy(cases);
}

// ---- Polygraphy's tests/comparator/test_data_loader.py ---------------------------------------

TensorMetadata meta(DataType dtype) {
  TensorMetadata m;
  m.add("X", dtype, DimList{F(4), F(4)}).add("Y", dtype, DimList{F(5), F(5)});
  return m;
}

DataLoader loader_for(TensorMetadata user, std::map<std::string, ValueRange> val_range = {}) {
  DataLoaderOptions options;
  options.input_metadata = std::move(user);
  options.val_range = std::move(val_range);
  return DataLoader(options);
}

std::vector<double> values_of(const Tensor& t) {
  std::vector<double> v(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) {
    switch (t.dtype()) {
      case DataType::kBool:
        v[i] = t.data<bool>()[i];
        break;
      case DataType::kInt32:
        v[i] = t.data<int32_t>()[i];
        break;
      case DataType::kInt64:
        v[i] = static_cast<double>(t.data<int64_t>()[i]);
        break;
      case DataType::kFloat32:
        v[i] = t.data<float>()[i];
        break;
      default:
        ADD_FAILURE() << "unexpected dtype " << dtype_name(t.dtype());
    }
  }
  return v;
}

bool all_within(const Tensor& t, double lo, double hi) {
  for (double v : values_of(t))
    if (!(v >= lo && v <= hi)) return false;
  return true;
}

const std::vector<DataType> kBasicTypes = {DataType::kInt32, DataType::kBool, DataType::kFloat32,
                                           DataType::kInt64};

TEST(DataLoader, DefaultRangesAreZeroToOne) {
  for (DataType dtype : kBasicTypes) {
    DataLoader loader = loader_for(meta(dtype));
    TensorMap feed = *loader.get(0);
    ASSERT_EQ(feed.size(), 2u);
    EXPECT_TRUE(all_within(feed.at("X"), 0, 1)) << dtype_name(dtype);
    EXPECT_TRUE(all_within(feed.at("Y"), 0, 1)) << dtype_name(dtype);
    EXPECT_EQ(feed.at("Y").shape(), (Shape{5, 5}));
  }
}

TEST(DataLoader, UserShapeOverridesDynamicModelShape) {
  TensorMetadata model;
  model.add("X", DataType::kFloat32, DimList{F(1), F(1), S("h"), S("w")});
  TensorMetadata user;
  user.add("X", std::nullopt, DimList{F(1), F(1), F(4), F(5)});
  DataLoader loader = loader_for(user);
  loader.set_input_metadata(model);
  EXPECT_EQ(loader.get(0)->at("X").shape(), (Shape{1, 1, 4, 5}));
}

TEST(DataLoader, EqualMinAndMaxGiveThatConstant) {
  for (DataType dtype : kBasicTypes) {
    for (double v : {0.0, 1.0}) {
      DataLoader loader = loader_for(meta(dtype), {{"", {v, v}}});
      TensorMap feed = *loader.get(0);
      EXPECT_TRUE(all_within(feed.at("X"), v, v)) << dtype_name(dtype) << " " << v;
      EXPECT_TRUE(all_within(feed.at("Y"), v, v)) << dtype_name(dtype) << " " << v;
    }
  }
}

TEST(DataLoader, ValueRangesIncludingInfinities) {
  struct RangeCase {
    double min, max;
    DataType dtype;
  };
  const std::vector<RangeCase> ranges = {
      {0, 1, DataType::kInt32},          {5.0, 5.5, DataType::kFloat32},
      {0, 1, DataType::kBool},           {kInf, kInf, DataType::kFloat32},
      {-kInf, kInf, DataType::kFloat32}, {0, kInf, DataType::kFloat32},
      {-kInf, 0, DataType::kFloat32}};
  for (const RangeCase& r : ranges) {
    DataLoader loader = loader_for(meta(r.dtype), {{"", {r.min, r.max}}});
    EXPECT_TRUE(all_within(loader.get(0)->at("X"), r.min, r.max))
        << "[" << r.min << ", " << r.max << "] " << dtype_name(r.dtype);
  }
}

TEST(DataLoader, PerInputRangesWithDefaultAndFallback) {
  for (DataType dtype : {DataType::kInt32, DataType::kInt64, DataType::kFloat32}) {
    TensorMap feed = *loader_for(meta(dtype), {{"X", {2, 5}}, {"Y", {-1, 2}}}).get(0);
    EXPECT_TRUE(all_within(feed.at("X"), 2, 5));
    EXPECT_TRUE(all_within(feed.at("Y"), -1, 2));

    feed = *loader_for(meta(dtype), {{"", {6, 8}}, {"Y", {-3, 4}}}).get(0);
    EXPECT_TRUE(all_within(feed.at("X"), 6, 8));
    EXPECT_TRUE(all_within(feed.at("Y"), -3, 4));

    feed = *loader_for(meta(dtype), {{"Y", {-3, 4}}}).get(0);
    EXPECT_TRUE(all_within(feed.at("X"), 0, 1));
    EXPECT_TRUE(all_within(feed.at("Y"), -3, 4));
  }
}

TEST(DataLoader, ShapeTensorValuesComeFromTheUserShape) {
  TensorMetadata model;
  model.add("X", DataType::kInt32, DimList{F(3)});
  TensorMetadata user;
  user.add("X", DataType::kInt32, DimList{F(1), F(2), F(3)});
  DataLoader loader = loader_for(user);
  loader.set_input_metadata(model);
  LogCapture log;
  Tensor x = loader.get(0)->at("X");
  EXPECT_EQ(x.shape(), (Shape{3}));
  EXPECT_EQ(values_of(x), (std::vector<double>{1, 2, 3}));
  EXPECT_TRUE(log.contains("Assuming X is a shape tensor. Setting input values to: [1 2 3]."))
      << log.text();
}

TEST(DataLoader, ShapeTensorHeuristicFalsePositivesAreAvoided) {
  // A negative "dim" makes the user shape dynamic: not shape values.
  {
    TensorMetadata model;
    model.add("X", DataType::kInt32, DimList{F(3)});
    TensorMetadata user;
    user.add("X", DataType::kInt32, DimList{Dim{-100, {}}, F(2), F(4)});
    DataLoader loader = loader_for(user);
    loader.set_input_metadata(model);
    LogCapture log(Severity::kWarning);
    Tensor x = loader.get(0)->at("X");
    EXPECT_EQ(x.shape(), (Shape{3}));
    EXPECT_NE(values_of(x), (std::vector<double>{-100, 2, 4}));
    EXPECT_TRUE(
        log.contains("is dynamic.\n    Dynamic shapes cannot be used to generate inference "
                     "data. Will use default shape instead."))
        << log.text();
  }
  // A float input is never a shape tensor.
  {
    TensorMetadata model;
    model.add("Xf", DataType::kFloat32, DimList{F(3)});
    TensorMetadata user;
    user.add("Xf", DataType::kFloat32, DimList{F(100), F(50), F(7)});
    DataLoader loader = loader_for(user);
    loader.set_input_metadata(model);
    LogCapture log(Severity::kWarning);
    Tensor x = loader.get(0)->at("Xf");
    EXPECT_EQ(x.shape(), (Shape{3}));
    EXPECT_TRUE(all_within(x, 0, 1));
    EXPECT_TRUE(
        log.contains("Input tensor: Xf [shape=BoundedShape([3], min=None, max=None)] | Cannot "
                     "use provided custom shape: BoundedShape([100, 50, 7], min=None, "
                     "max=None) to override tensor shape. Will use default shape instead."))
        << log.text();
  }
  // Without user metadata an input is never a shape tensor.
  {
    TensorMetadata model;
    model.add("X", DataType::kInt32, DimList{F(3)});
    DataLoader loader;
    loader.set_input_metadata(model);
    Tensor x = loader.get(0)->at("X");
    EXPECT_EQ(x.shape(), (Shape{3}));
    EXPECT_TRUE(all_within(x, 0, 1));
  }
}

TEST(DataLoader, ScalarInputs) {
  TensorMetadata model;
  model.add("s", DataType::kFloat32, DimList{}).add("i", DataType::kInt64, DimList{});
  DataLoader loader;
  loader.set_input_metadata(model);
  TensorMap feed = *loader.get(0);
  EXPECT_EQ(feed.at("s").shape(), Shape{});
  EXPECT_EQ(feed.at("s").numel(), 1);
  EXPECT_EQ(feed.at("i").shape(), Shape{});
  EXPECT_TRUE(all_within(feed.at("s"), 0, 1));
}

TEST(DataLoader, TypesNumpyCannotHoldNeedACustomLoader) {
  for (DataType dtype : {DataType::kBFloat16, DataType::kFloat8E4M3FN, DataType::kFloat8E5M2,
                         DataType::kInt4, DataType::kUInt4, DataType::kString}) {
    TensorMetadata model;
    model.add("x", dtype, DimList{F(2)});
    DataLoader loader;
    loader.set_input_metadata(model);
    try {
      loader.get(0);
      ADD_FAILURE() << dtype_name(dtype) << " was generated";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("Please use a custom data loader to provide inputs."),
                std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find(std::string(dtype_name(dtype))), std::string::npos);
    }
  }
  // A user dtype cannot rescue a model dtype NumPy lacks (Polygraphy checks the model's first).
  TensorMetadata model;
  model.add("x", DataType::kBFloat16, DimList{F(2)});
  TensorMetadata user;
  user.add("x", DataType::kFloat32, std::nullopt);
  DataLoader loader = loader_for(user);
  loader.set_input_metadata(model);
  EXPECT_THROW(loader.get(0), Error);
}

TEST(DataLoader, InputNamesWithWildcards) {
  const std::vector<std::string> names = {"inp_foo", "inp_bar", "inp_123", "inp_1",
                                          "inp_s",   "inp_k",   "inp_a",   "inp_b",
                                          "inp_c",   "inp_d",   "inp_e",   "inp_f"};
  struct Pattern {
    std::string pattern;
    std::vector<bool> should_match;
  };
  const std::vector<Pattern> patterns = {
      {"inp_*", std::vector<bool>(12, true)},
      {"inp_?", {false, false, false, true, true, true, true, true, true, true, true, true}},
      {"inp_[abc]",
       {false, false, false, false, false, false, true, true, true, false, false, false}},
      {"inp_[!abc]",
       {false, false, false, true, true, true, false, false, false, true, true, true}},
  };
  TensorMetadata model;
  for (const std::string& n : names)
    model.add(n, DataType::kFloat32, DimList{Dim::unknown(), F(2), F(3)});
  for (const Pattern& p : patterns) {
    TensorMetadata user;
    user.add(p.pattern, std::nullopt, DimList{F(2), F(2), F(3)});
    LogCapture quiet(Severity::kError);
    DataLoader loader = loader_for(user);
    loader.set_input_metadata(model);
    TensorMap feed = *loader.get(0);
    for (size_t i = 0; i < names.size(); ++i)
      EXPECT_EQ(feed.at(names[i]).shape() == (Shape{2, 2, 3}), p.should_match[i])
          << p.pattern << " vs " << names[i];
  }
}

TEST(DataLoader, DynamicDimsBecomeOneWithAWarning) {
  TensorMetadata model;
  model.add("dyn_input", DataType::kFloat32, DimList{S("batch"), F(3), Dim::unknown()});
  DataLoader loader;
  loader.set_input_metadata(model);
  LogCapture log(Severity::kWarning);
  EXPECT_EQ(loader.get(0)->at("dyn_input").shape(), (Shape{1, 3, 1}));
  EXPECT_TRUE(
      log.contains("Input tensor: dyn_input [shape=BoundedShape(['batch', 3, None], min=None, "
                   "max=None)] | Will generate "
                   "data of shape: [1, 3, 1].\n    If this is incorrect, please provide a "
                   "custom data loader."))
      << log.text();
}

TEST(DataLoader, WarnsAboutUnusedMetadataAndRanges) {
  TensorMetadata model;
  model.add("input_ids", DataType::kInt64, DimList{F(2)});
  TensorMetadata user;
  user.add("INPUT", std::nullopt, DimList{F(2)}).add("nothing_*", std::nullopt, DimList{F(2)});
  DataLoader loader = loader_for(user, {{"input_idz", {0, 5}}, {"", {0, 2}}});
  loader.set_input_metadata(model);
  LogCapture log(Severity::kWarning);
  loader.get(0);
  EXPECT_TRUE(
      log.contains("Input tensor: INPUT | Metadata was provided, but the input does not "
                   "exist in one or more runners.\n    Maybe you meant to set: input_ids?"))
      << log.text();
  EXPECT_TRUE(
      log.contains("Input tensor wildcard: nothing_* | Metadata was provided, but none "
                   "of the matched inputs exist in one or more runners."))
      << log.text();
  EXPECT_TRUE(log.contains("Extra items in val_range: {'input_idz'}.")) << log.text();
}

TEST(DataLoader, IterationsSeedsAndErrors) {
  TensorMetadata model;
  model.add("x", DataType::kFloat32, DimList{F(8)});
  DataLoaderOptions options;
  options.iterations = 2;
  DataLoader loader(options);
  loader.set_input_metadata(model);
  EXPECT_EQ(loader.size(), 2u);
  ASSERT_TRUE(loader.get(1).has_value());
  EXPECT_FALSE(loader.get(2).has_value());
  // The same index gives the same data; another index differs.
  EXPECT_TRUE(loader.get(0)->at("x").equals(loader.get(0)->at("x")));
  EXPECT_FALSE(loader.get(0)->at("x").equals(loader.get(1)->at("x")));

  // seed + index must stay a valid NumPy seed.
  options.seed = 4294967295u;
  DataLoader last_seed(options);
  last_seed.set_input_metadata(model);
  EXPECT_TRUE(last_seed.get(0).has_value());
  EXPECT_THROW(last_seed.get(1), Error);

  // Integer inputs need finite bounds inside the dtype; NumPy's randint rejects the rest.
  TensorMetadata ints;
  ints.add("u", DataType::kUInt8, DimList{F(3)});
  for (ValueRange bad : {ValueRange{-1, 5}, ValueRange{0, 256}, ValueRange{0, kInf},
                         ValueRange{3, 2}, ValueRange{std::nan(""), 1}}) {
    DataLoaderOptions o;
    o.val_range = {{"u", bad}};
    DataLoader l(o);
    l.set_input_metadata(ints);
    EXPECT_THROW(l.get(0), Error) << *bad.min << ", " << *bad.max;
  }
}

}  // namespace
}  // namespace parity
