// DataLoader: generates feed dicts exactly as Polygraphy's does, bit for bit for the same seed
// (NumPy RandomState: MT19937, random_sample, randint). Iteration i uses seed + i.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "comparator/compare.h"
#include "core/metadata.h"
#include "core/tensor.h"

namespace parity {

struct ValueRange {
  std::optional<double> min, max;  // nullopt = the default (0 / 1) for that end
};

struct DataLoaderOptions {
  uint32_t seed = 1;
  int64_t iterations = 1;
  // Per-input range; key "" is the default for inputs not named. Default [0, 1].
  std::map<std::string, ValueRange> val_range;
  // User-given shapes and dtypes (--input-shapes); names may use fnmatch wildcards.
  TensorMetadata input_metadata;
  // Polygraphy's deprecated DataLoader(int_range=, float_range=): when set, the range of every
  // integer (not bool) or floating input, in place of val_range.
  std::optional<std::pair<double, double>> int_range, float_range;
  // Sequence and map inputs, which Polygraphy's loader cannot generate: a sequence gets this
  // many tensors (a sequence of maps this many maps), a map this many entries with the keys
  // 0, 1, ... ("0", "1", ... for string keys). Like a dynamic dimension set to 1, the default
  // is small and a warning says what was generated.
  int64_t sequence_length = 1;
  int64_t map_size = 1;
};

// Anything that yields feed dicts: generated data, loaded files, a user's script.
class FeedSource {
 public:
  virtual ~FeedSource() = default;
  // Called with the first runner's input metadata before any feed is requested.
  virtual void set_input_metadata(const TensorMetadata& metadata) {}
  // The number of feeds, when known in advance.
  virtual std::optional<size_t> size() const = 0;
  // Feed i; nullopt past the end.
  virtual std::optional<TensorMap> get(size_t i) = 0;
};

class DataLoader : public FeedSource {
 public:
  explicit DataLoader(DataLoaderOptions options = {});
  void set_input_metadata(const TensorMetadata& metadata) override;
  std::optional<size_t> size() const override { return static_cast<size_t>(options_.iterations); }
  std::optional<TensorMap> get(size_t i) override;
  // Polygraphy's DataLoader.input_metadata: the model's inputs once a runner has given them,
  // else the user's (nullptr when neither is known).
  const TensorMetadata* input_metadata() const;
  const DataLoaderOptions& options() const { return options_; }

 private:
  DataLoaderOptions options_;
  TensorMetadata metadata_;
  bool has_model_metadata_ = false;  // until set, the user's metadata describes the inputs
};

// A fixed list of feeds (from --load-inputs, or given through the API).
class FeedList : public FeedSource {
 public:
  explicit FeedList(std::vector<TensorMap> feeds) : feeds_(std::move(feeds)) {}
  std::optional<size_t> size() const override { return feeds_.size(); }
  std::optional<TensorMap> get(size_t i) override {
    if (i >= feeds_.size()) return std::nullopt;
    return feeds_[i];
  }

 private:
  std::vector<TensorMap> feeds_;
};

// NumPy's RandomState, enough of it to reproduce Polygraphy's inputs.
class NumpyRandomState {
 public:
  explicit NumpyRandomState(uint32_t seed);
  uint32_t next_uint32();
  uint64_t next_uint64();  // two draws, the first one high
  double random_sample();  // [0, 1), 53 bits from two draws
  void random_sample_fill(double* out, size_t count);
  // randint(low, high) for an exclusive high, with NumPy's masked rejection for the given dtype.
  int64_t randint(int64_t low, int64_t high, DataType dtype);
  // One randint call filling `count` elements of `dtype` (bool or an integer type) at `out`:
  // NumPy's random_bounded_*_fill with offset `off` and inclusive span `rng`, both already
  // reduced modulo 2^64 (values are off + [0, rng], wrapping at the dtype's width). 8- and
  // 16-bit types and bool split 32-bit draws into pieces, as NumPy does.
  void bounded_fill(DataType dtype, uint64_t off, uint64_t rng, void* out, size_t count);

 private:
  uint32_t state_[624];
  int index_ = 624;
};

}  // namespace parity
