// NumPy's legacy RandomState, reduced to what Polygraphy's DataLoader calls: the MT19937
// generator seeded from one integer, random_sample() and randint(low, high, size, dtype).
// Every draw must consume the generator exactly as NumPy 1.24 does, or the inputs that follow
// in the same feed would differ from Polygraphy's.
#include "comparator/data_loader.h"
#include "core/error.h"

namespace parity {

namespace {

constexpr int kStateSize = 624;
constexpr int kShift = 397;
constexpr uint32_t kMatrixA = 0x9908b0dfu;
constexpr uint32_t kUpperMask = 0x80000000u;
constexpr uint32_t kLowerMask = 0x7fffffffu;

// The twist of one state word with its successor, as MT19937 defines it.
inline uint32_t twist(uint32_t word, uint32_t next, uint32_t far) {
  uint32_t y = (word & kUpperMask) | (next & kLowerMask);
  return far ^ (y >> 1) ^ ((y & 1u) ? kMatrixA : 0u);
}

// The smallest all-ones mask covering `max` (NumPy's masked rejection draws under it).
uint64_t covering_mask(uint64_t max) {
  uint64_t mask = max;
  mask |= mask >> 1;
  mask |= mask >> 2;
  mask |= mask >> 4;
  mask |= mask >> 8;
  mask |= mask >> 16;
  mask |= mask >> 32;
  return mask;
}

// NumPy draws 8- and 16-bit integers (and bools) from one 32-bit word split into pieces,
// low piece first; a fresh word is drawn when the pieces run out. The buffer lives for one
// fill call only, so a new array always starts from a fresh word.
template <int kBits>
class PieceBuffer {
 public:
  explicit PieceBuffer(NumpyRandomState& state) : state_(state) {}
  uint32_t next() {
    if (left_ == 0) {
      word_ = state_.next_uint32();
      left_ = 32 / kBits - 1;
    } else {
      word_ >>= kBits;
      --left_;
    }
    return word_ & ((1u << kBits) - 1u);
  }

 private:
  NumpyRandomState& state_;
  uint32_t word_ = 0;
  int left_ = 0;
};

// Values in [0, rng] for types of 8 or 16 bits, written as off + value (wrapping).
template <typename U, int kBits>
void fill_small(NumpyRandomState& state, U off, U rng, U* out, size_t count) {
  if (rng == 0) {
    for (size_t i = 0; i < count; ++i) out[i] = off;
    return;
  }
  PieceBuffer<kBits> pieces(state);
  const uint32_t mask = static_cast<uint32_t>(covering_mask(rng));
  for (size_t i = 0; i < count; ++i) {
    uint32_t value;
    do {
      value = pieces.next() & mask;
    } while (value > rng);
    out[i] = static_cast<U>(off + value);
  }
}

// Values in [0, rng] drawn from whole 32-bit words (uint32, and 64-bit types with a small range).
template <typename U>
void fill_from_words(NumpyRandomState& state, U off, uint32_t rng, U* out, size_t count) {
  const uint32_t mask = static_cast<uint32_t>(covering_mask(rng));
  for (size_t i = 0; i < count; ++i) {
    uint32_t value;
    do {
      value = state.next_uint32() & mask;
    } while (value > rng);
    out[i] = static_cast<U>(off + value);
  }
}

void fill_32(NumpyRandomState& state, uint32_t off, uint32_t rng, uint32_t* out, size_t count) {
  if (rng == 0) {
    for (size_t i = 0; i < count; ++i) out[i] = off;
    return;
  }
  fill_from_words(state, off, rng, out, count);
}

void fill_64(NumpyRandomState& state, uint64_t off, uint64_t rng, uint64_t* out, size_t count) {
  if (rng == 0) {
    for (size_t i = 0; i < count; ++i) out[i] = off;
  } else if (rng <= 0xFFFFFFFFull) {
    // NumPy switches to 32-bit draws when the range fits in 32 bits.
    fill_from_words(state, off, static_cast<uint32_t>(rng), out, count);
  } else {
    const uint64_t mask = covering_mask(rng);
    for (size_t i = 0; i < count; ++i) {
      uint64_t value;
      do {
        value = state.next_uint64() & mask;
      } while (value > rng);
      out[i] = off + value;
    }
  }
}

// Bools come one bit at a time from a 32-bit word, lowest bit first; `off` only matters when
// the range is empty.
void fill_bool(NumpyRandomState& state, bool off, bool rng, bool* out, size_t count) {
  if (!rng) {
    for (size_t i = 0; i < count; ++i) out[i] = off;
    return;
  }
  PieceBuffer<1> bits(state);
  for (size_t i = 0; i < count; ++i) out[i] = bits.next() != 0;
}

// The inclusive bounds NumPy's randint accepts for each integer dtype.
struct IntBounds {
  __int128 min, max;
};

[[noreturn]] void fail_not_integer(DataType dtype) {
  fail(
      "failed to draw random integers of dtype {}: randint supports only integer types and "
      "bool; valid: bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64",
      dtype_name(dtype));
}

IntBounds int_bounds(DataType dtype) {
  switch (dtype) {
    case DataType::kBool:
      return {0, 1};
    case DataType::kInt8:
      return {INT8_MIN, INT8_MAX};
    case DataType::kInt16:
      return {INT16_MIN, INT16_MAX};
    case DataType::kInt32:
      return {INT32_MIN, INT32_MAX};
    case DataType::kInt64:
      return {INT64_MIN, INT64_MAX};
    case DataType::kUInt8:
      return {0, UINT8_MAX};
    case DataType::kUInt16:
      return {0, UINT16_MAX};
    case DataType::kUInt32:
      return {0, UINT32_MAX};
    case DataType::kUInt64:
      return {0, UINT64_MAX};
    default:
      fail_not_integer(dtype);
  }
}

template <typename T>
int64_t draw_one(NumpyRandomState& state, DataType dtype, uint64_t off, uint64_t rng) {
  T value{};
  state.bounded_fill(dtype, off, rng, &value, 1);
  return static_cast<int64_t>(value);
}

}  // namespace

NumpyRandomState::NumpyRandomState(uint32_t seed) {
  // RandomState(int) seeds with MT19937's init_genrand (not init_by_array).
  state_[0] = seed;
  for (int i = 1; i < kStateSize; ++i) {
    uint32_t prev = state_[i - 1];
    state_[i] = 1812433253u * (prev ^ (prev >> 30)) + static_cast<uint32_t>(i);
  }
  index_ = kStateSize;
}

uint32_t NumpyRandomState::next_uint32() {
  if (index_ >= kStateSize) {
    int i = 0;
    for (; i < kStateSize - kShift; ++i)
      state_[i] = twist(state_[i], state_[i + 1], state_[i + kShift]);
    for (; i < kStateSize - 1; ++i)
      state_[i] = twist(state_[i], state_[i + 1], state_[i + kShift - kStateSize]);
    state_[kStateSize - 1] = twist(state_[kStateSize - 1], state_[0], state_[kShift - 1]);
    index_ = 0;
  }
  uint32_t y = state_[index_++];
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= y >> 18;
  return y;
}

uint64_t NumpyRandomState::next_uint64() {
  uint64_t high = next_uint32();
  return (high << 32) | next_uint32();
}

double NumpyRandomState::random_sample() {
  // 27 + 26 bits from two draws: exactly the 53-bit grid of doubles in [0, 1).
  uint32_t a = next_uint32() >> 5;
  uint32_t b = next_uint32() >> 6;
  return (a * 67108864.0 + b) / 9007199254740992.0;
}

void NumpyRandomState::random_sample_fill(double* out, size_t count) {
  for (size_t i = 0; i < count; ++i) out[i] = random_sample();
}

void NumpyRandomState::bounded_fill(DataType dtype, uint64_t off, uint64_t rng, void* out,
                                    size_t count) {
  switch (dtype) {
    case DataType::kBool:
      fill_bool(*this, off != 0, rng != 0, static_cast<bool*>(out), count);
      break;
    case DataType::kInt8:
    case DataType::kUInt8:
      fill_small<uint8_t, 8>(*this, static_cast<uint8_t>(off), static_cast<uint8_t>(rng),
                             static_cast<uint8_t*>(out), count);
      break;
    case DataType::kInt16:
    case DataType::kUInt16:
      fill_small<uint16_t, 16>(*this, static_cast<uint16_t>(off), static_cast<uint16_t>(rng),
                               static_cast<uint16_t*>(out), count);
      break;
    case DataType::kInt32:
    case DataType::kUInt32:
      fill_32(*this, static_cast<uint32_t>(off), static_cast<uint32_t>(rng),
              static_cast<uint32_t*>(out), count);
      break;
    case DataType::kInt64:
    case DataType::kUInt64:
      fill_64(*this, off, rng, static_cast<uint64_t*>(out), count);
      break;
    default:
      fail_not_integer(dtype);
  }
}

int64_t NumpyRandomState::randint(int64_t low, int64_t high, DataType dtype) {
  // NumPy checks the closed interval [low, high - 1] against the dtype's limits.
  IntBounds bounds = int_bounds(dtype);
  const __int128 last = static_cast<__int128>(high) - 1;
  if (low < bounds.min)
    fail("failed to draw a random integer with low {}: low is out of bounds for {}", low,
         dtype_name(dtype));
  if (last > bounds.max)
    fail("failed to draw a random integer with high {}: high is out of bounds for {}", high,
         dtype_name(dtype));
  if (low > last)
    fail("failed to draw a random integer with low {} and high {}: low must be below high", low,
         high);
  // NumPy's offset and span are taken modulo 2^64 (and then at the dtype's width).
  const uint64_t off = static_cast<uint64_t>(low);
  const uint64_t rng = static_cast<uint64_t>(last - low);
  switch (dtype) {
    case DataType::kBool:
      return draw_one<bool>(*this, dtype, off, rng);
    case DataType::kInt8:
      return draw_one<int8_t>(*this, dtype, off, rng);
    case DataType::kUInt8:
      return draw_one<uint8_t>(*this, dtype, off, rng);
    case DataType::kInt16:
      return draw_one<int16_t>(*this, dtype, off, rng);
    case DataType::kUInt16:
      return draw_one<uint16_t>(*this, dtype, off, rng);
    case DataType::kInt32:
      return draw_one<int32_t>(*this, dtype, off, rng);
    case DataType::kUInt32:
      return draw_one<uint32_t>(*this, dtype, off, rng);
    default:
      return draw_one<int64_t>(*this, dtype, off, rng);  // uint64 wraps above INT64_MAX
  }
}

}  // namespace parity
