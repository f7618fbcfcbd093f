#include "debug/markers.h"

#include <cmath>
#include <cstdlib>

namespace parity::debug {

void Marker::step(bool success, int64_t num_nodes) {
  ++iteration_;
  if (!success && num_nodes <= least_bad_nodes_) {
    least_bad_nodes_ = num_nodes;
    best_bad_ = node_index_;
  }
  if (success) good_node_indices_[num_nodes] = node_index_;
}

void Marker::finish() {
  std::optional<int64_t> below, above;  // node counts of passing candidates
  for (const auto& [num, index] : good_node_indices_) {
    if (num < least_bad_nodes_) below = num;             // ascending: ends at the largest
    if (num >= least_bad_nodes_ && !above) above = num;  // the smallest
  }
  if (below)
    best_good_ = good_node_indices_[*below];
  else if (above)
    best_good_ = good_node_indices_[*above];
}

BisectMarker::BisectMarker(int64_t num_nodes, bool invert)
    : Marker(num_nodes, num_nodes / 2), good_(0), bad_(num_nodes) {
  if (invert) std::swap(good_, bad_);
}

void BisectMarker::step(bool success, int64_t num_nodes) {
  Marker::step(success, num_nodes);
  if (success) {
    good_ = node_index_;
  } else {
    bad_ = node_index_;
  }
  const double next = static_cast<double>(good_ + bad_) / 2.0;
  node_index_ = static_cast<int64_t>(success ? std::ceil(next) : std::floor(next));
}

bool BisectMarker::stop() const { return std::llabs(good_ - bad_) <= 1; }

int64_t BisectMarker::remaining() const {
  return static_cast<int64_t>(std::ceil(std::log2(static_cast<double>(num_nodes_)))) - iteration_;
}

LinearMarker::LinearMarker(int64_t num_nodes, bool invert)
    : Marker(num_nodes, invert ? 0 : num_nodes - 1), invert_(invert) {}

void LinearMarker::step(bool success, int64_t num_nodes) {
  Marker::step(success, num_nodes);
  node_index_ += invert_ ? 1 : -1;
}

bool LinearMarker::stop() const { return node_index_ < 0 || node_index_ >= num_nodes_; }

}  // namespace parity::debug
