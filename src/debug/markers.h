// How `debug reduce` walks the nodes (Polygraphy's BisectMarker and LinearMarker): each step
// takes the verdict of the candidate cut at node_index and gives the next index to cut at,
// while remembering the smallest failing candidate and the largest passing one below it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>

namespace parity::debug {

class Marker {
 public:
  virtual ~Marker() = default;
  // Records the verdict of the candidate at node_index() holding `num_nodes` nodes, moves on.
  virtual void step(bool success, int64_t num_nodes);
  virtual bool stop() const = 0;
  virtual int64_t remaining() const = 0;
  // Picks the best passing candidate: the largest smaller than the best failing one, else the
  // smallest larger one.
  void finish();

  int64_t node_index() const { return node_index_; }
  std::optional<int64_t> best_bad_node_index() const { return best_bad_; }
  std::optional<int64_t> best_good_node_index() const { return best_good_; }

 protected:
  Marker(int64_t num_nodes, int64_t node_index) : num_nodes_(num_nodes), node_index_(node_index) {}
  int64_t num_nodes_;
  int64_t node_index_;
  int64_t iteration_ = 0;

 private:
  int64_t least_bad_nodes_ = num_nodes_ + 1;
  std::optional<int64_t> best_bad_, best_good_;
  std::map<int64_t, int64_t> good_node_indices_;  // num_nodes -> node index, for each pass
};

// Binary search: starts in the middle, assuming the whole model fails. `invert` searches from
// the other end (for graph inputs).
class BisectMarker : public Marker {
 public:
  explicit BisectMarker(int64_t num_nodes, bool invert = false);
  void step(bool success, int64_t num_nodes) override;
  bool stop() const override;
  int64_t remaining() const override;

 private:
  int64_t good_, bad_;
};

// One node at a time, from the last (or, inverted, the first).
class LinearMarker : public Marker {
 public:
  explicit LinearMarker(int64_t num_nodes, bool invert = false);
  void step(bool success, int64_t num_nodes) override;
  bool stop() const override;
  int64_t remaining() const override { return num_nodes_ - iteration_; }

 private:
  bool invert_;
};

}  // namespace parity::debug
