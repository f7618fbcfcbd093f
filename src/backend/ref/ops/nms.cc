// NonMaxSuppression: for each batch and class, greedily keeps the highest-scoring boxes
// whose IoU with every box already kept is at most iou_threshold, up to
// max_output_boxes_per_class, among boxes scoring above score_threshold. Output rows
// (batch, class, box) come batch by batch, class by class, in the order boxes were kept
// (descending score; equal scores keep the lower box index first).
#include <algorithm>
#include <numeric>

#include "backend/ref/ops/kernel_util.h"

namespace parity::ref {
namespace {

struct Box {
  double y1, x1, y2, x2;  // sorted corners: y1 <= y2, x1 <= x2
  double area() const { return (y2 - y1) * (x2 - x1); }
};

// IoU > threshold, as the reference computes it: no overlap or a degenerate box never
// suppresses.
bool overlaps(const Box& a, const Box& b, double threshold) {
  const double ih = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  const double iw = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  if (ih <= 0 || iw <= 0) return false;
  const double inter = ih * iw, area_a = a.area(), area_b = b.area();
  const double uni = area_a + area_b - inter;
  if (area_a <= 0 || area_b <= 0 || uni <= 0) return false;
  return inter / uni > threshold;
}

class NonMaxSuppression : public Kernel {
 public:
  explicit NonMaxSuppression(const OpContext& ctx)
      : center_point_box_(ctx.attr_int("center_point_box", 0)) {
    if (center_point_box_ != 0 && center_point_box_ != 1)
      ctx.fail("attribute 'center_point_box' is {}; it must be 0 or 1", center_point_box_);
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& boxes_t = input_tensor(in, 0, "boxes");
    const Tensor& scores_t = input_tensor(in, 1, "scores");
    if (boxes_t.rank() != 3 || boxes_t.shape()[2] != 4 || scores_t.rank() != 3 ||
        scores_t.shape()[0] != boxes_t.shape()[0] || scores_t.shape()[2] != boxes_t.shape()[1])
      ctx.fail("boxes has shape {} and scores {}; they must be [B, S, 4] and [B, C, S]",
               shape_str(boxes_t.shape()), shape_str(scores_t.shape()));
    int64_t max_boxes = 0;
    if (const Tensor* t = optional_input(in, 2, "max_output_boxes_per_class"); t && t->numel())
      max_boxes = read_int64s(*t, "max_output_boxes_per_class").at(0);
    double iou_threshold = 0;
    if (const Tensor* t = optional_input(in, 3, "iou_threshold"); t && t->numel())
      iou_threshold = read_scalar(*t, "iou_threshold");
    const Tensor* score_t = optional_input(in, 4, "score_threshold");
    const bool has_score_threshold = score_t && score_t->numel();
    const double score_threshold =
        has_score_threshold ? read_scalar(*score_t, "score_threshold") : 0;
    const std::vector<double> boxes = values(boxes_t, "input boxes");
    const std::vector<double> scores = values(scores_t, "input scores");
    const int64_t batches = boxes_t.shape()[0], spatial = boxes_t.shape()[1];
    const int64_t classes = scores_t.shape()[1];

    std::vector<int64_t> selected;  // flattened (batch, class, box) triples
    std::vector<Box> corners(static_cast<size_t>(spatial));
    std::vector<int64_t> order, kept;
    for (int64_t b = 0; b < batches && max_boxes > 0; ++b) {
      for (int64_t s = 0; s < spatial; ++s)
        corners[s] = box_at(boxes.data() + (b * spatial + s) * 4);
      for (int64_t c = 0; c < classes; ++c) {
        const double* sc = scores.data() + (b * classes + c) * spatial;
        order.clear();
        for (int64_t s = 0; s < spatial; ++s)
          if (!has_score_threshold || sc[s] > score_threshold) order.push_back(s);
        std::stable_sort(order.begin(), order.end(),
                         [&](int64_t p, int64_t q) { return sc[p] > sc[q]; });
        kept.clear();
        for (int64_t s : order) {
          if (static_cast<int64_t>(kept.size()) >= max_boxes) break;
          bool suppressed = false;
          for (int64_t k : kept)
            if (overlaps(corners[k], corners[s], iou_threshold)) {
              suppressed = true;
              break;
            }
          if (suppressed) continue;
          kept.push_back(s);
          selected.insert(selected.end(), {b, c, s});
        }
      }
    }
    const int64_t rows = static_cast<int64_t>(selected.size() / 3);
    return {Tensor::from_vector<int64_t>({rows, 3}, selected)};
  }

 private:
  static std::vector<double> values(const Tensor& t, std::string_view what) {
    return dispatch<FloatTypes>(
        t.dtype(),
        [&]<typename T>() {
          std::vector<double> v(static_cast<size_t>(t.numel()));
          for (size_t i = 0; i < v.size(); ++i) v[i] = to_double(t.data<T>()[i]);
          return v;
        },
        what);
  }

  // [y1, x1, y2, x2] with any corner order, or [x_center, y_center, width, height].
  Box box_at(const double* v) const {
    if (center_point_box_ == 1)
      return {v[1] - v[3] / 2, v[0] - v[2] / 2, v[1] + v[3] / 2, v[0] + v[2] / 2};
    return {std::min(v[0], v[2]), std::min(v[1], v[3]), std::max(v[0], v[2]), std::max(v[1], v[3])};
  }

  int64_t center_point_box_;
};
// Versions 10, 11 (unchanged semantics).
PARITY_REF_OP("", "NonMaxSuppression", 10, kOpsetMax, NonMaxSuppression);

}  // namespace
}  // namespace parity::ref
