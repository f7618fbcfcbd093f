// The runner contract (Polygraphy's BaseRunner). The public methods check state and inputs,
// then call the small *_impl hooks that each backend fills in:
//
//   activate()        -> activate_impl()        build sessions, plans, buffers
//   input_metadata()  -> input_metadata_impl()  what infer() expects
//   infer(feed)       -> infer_impl(feed)       after the feed is validated
//   deactivate()      -> deactivate_impl()      release everything activate() made
//
// RunnerActivation plays the role of Python's `with runner:`.
#pragma once

#include <optional>
#include <string>

#include "core/metadata.h"
#include "core/tensor.h"
#include "onnx/graph.h"

namespace parity {

class Runner {
 public:
  // An empty name gets Polygraphy's default: "{prefix}-N{count}-{MM/DD/YY}-{HH:MM:SS}", with a
  // process-wide counter per prefix.
  Runner(std::string name, const std::string& prefix);
  virtual ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  const std::string& name() const { return name_; }
  bool is_active() const { return active_; }

  void activate();    // warns if already active
  void deactivate();  // warns if not active
  TensorMetadata input_metadata();
  // Validates the feed (names, dtypes, shapes; Polygraphy's messages) unless check_inputs is
  // false, then runs. Outputs are in the model's output order.
  TensorMap infer(const TensorMap& feed, bool check_inputs = true);
  // Seconds spent in the backend's own run call during the last infer(); nullopt before any.
  std::optional<double> last_inference_time() const;
  // The same without the warning: Polygraphy's plain `inference_time` attribute.
  std::optional<double> inference_time() const { return inference_time_; }
  // Whether this backend can run `node` of a model that imports `opset` for the node's domain,
  // so that "not supported" is reported apart from "failed". nullopt: the backend cannot tell
  // without trying (the default).
  virtual std::optional<bool> supports(const ir::Node& node, int64_t opset) const;

 protected:
  virtual void activate_impl() = 0;
  virtual void deactivate_impl() = 0;
  virtual TensorMetadata input_metadata_impl() = 0;
  virtual TensorMap infer_impl(const TensorMap& feed) = 0;
  void set_inference_time(double seconds) { inference_time_ = seconds; }

 private:
  std::string name_;
  bool active_ = false;
  std::optional<double> inference_time_;
};

// Throws the error Polygraphy raises for a feed that does not fit `expected`.
void check_feed(const std::string& runner_name, const TensorMap& feed,
                const TensorMetadata& expected);

// The graph inputs of `model` as a runner reports them (a non-tensor input has no dtype/shape).
TensorMetadata model_input_metadata(const ir::Model& model);

// Activates on construction, deactivates on destruction.
class RunnerActivation {
 public:
  explicit RunnerActivation(Runner& r) : runner_(r) { runner_.activate(); }
  ~RunnerActivation() {
    try {
      if (runner_.is_active()) runner_.deactivate();
    } catch (...) {
    }
  }
  RunnerActivation(const RunnerActivation&) = delete;
  RunnerActivation& operator=(const RunnerActivation&) = delete;

 private:
  Runner& runner_;
};

}  // namespace parity
