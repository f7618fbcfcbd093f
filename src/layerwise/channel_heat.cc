#include "layerwise/channel_heat.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "stats/differences.h"

namespace parity {

namespace {
bool numeric(DataType t) { return dtype_is_float(t) || dtype_is_integer(t); }
}  // namespace

void add_channel_heatmaps(const Tensor& out0, const Tensor& out1, ErrorProfile& profile) {
  profile.channel_heat.clear();
  const Shape& shape = out1.shape();
  if (profile.heat_rows <= 0 || shape.size() < 3 || out0.shape() != shape ||
      !numeric(out0.dtype()) || !numeric(out1.dtype()))
    return;
  const int64_t rows = shape[shape.size() - 2], cols = shape[shape.size() - 1];
  const int64_t channels = shape[shape.size() - 3];
  if (rows != profile.rows || cols != profile.cols || rows * cols == 0 || channels == 0) return;
  const int64_t plane = rows * cols, leading = out1.numel() / (plane * channels);
  const int64_t shown = std::min<int64_t>(channels, ErrorProfile::kHeatChannels);
  // The cell of each column and row, as the fused pass places them (tensor_error.cc).
  std::vector<int64_t> cell_col(static_cast<size_t>(cols)), cell_row(static_cast<size_t>(rows));
  for (int64_t w = 0; w < cols; ++w) cell_col[w] = w * profile.heat_cols / cols;
  for (int64_t h = 0; h < rows; ++h) cell_row[h] = h * profile.heat_rows / rows;
  profile.channel_heat.assign(
      static_cast<size_t>(shown),
      std::vector<float>(static_cast<size_t>(profile.heat_rows * profile.heat_cols), 0.0f));
  const ElementReader r0(out0), r1(out1);
  std::vector<double> a(static_cast<size_t>(cols)), b(static_cast<size_t>(cols));
  for (int64_t l = 0; l < leading; ++l)
    for (int64_t c = 0; c < shown; ++c) {
      std::vector<float>& heat = profile.channel_heat[static_cast<size_t>(c)];
      for (int64_t h = 0; h < rows; ++h) {
        const int64_t begin = ((l * channels + c) * rows + h) * cols;
        r0.read(begin, cols, a.data());
        r1.read(begin, cols, b.data());
        float* row = heat.data() + cell_row[h] * profile.heat_cols;
        for (int64_t w = 0; w < cols; ++w) {
          double d = std::fabs(a[w] - b[w]);
          if (std::isnan(d)) d = std::numeric_limits<double>::infinity();
          float& cell = row[cell_col[w]];
          cell = std::max(cell, static_cast<float>(d));
        }
      }
    }
}

}  // namespace parity
