// The registry of backends. A backend registers itself beside its code, as an op does
// (PARITY_REGISTER_BACKEND in backend/ref/backend.cc, backend/onnxrt/backend.cc, or a shared
// library through plugin_api.h): its name, its command-line flag, its own option group, how it
// makes a runner, what --gen-script writes for it, and how it serves intermediate tensors to
// layer-wise comparison. `parity run`, layer-wise comparison, --gen-script, --help and the
// Python module iterate over the registry; none of them names a backend.
//
//   Backend b;
//   b.name = "mybackend";                      // runner names "mybackend-runner-N0-..."
//   b.flags = "--mybackend";
//   b.help = "Run inference with MyBackend";
//   b.group = "MyBackend Runner";
//   b.options = {{"--my-threads", BackendOption::Kind::kValue, "Threads (0 = default)", "0"}};
//   b.configure = [](const BackendOptionValues& v) { return std::any(v.integer(...)); };
//   b.make_runner = [](Loader<ModelPtr> model, const std::any& config) { ... };
//   PARITY_REGISTER_BACKEND(b);
#pragma once

#include <any>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "backend/runner.h"
#include "core/loader.h"
#include "core/value.h"
#include "onnx/loaders.h"

namespace parity {

// One option of a backend's group, offered the same way by the command line ("--ort-threads 2")
// and the Python module (ort_threads=2).
struct BackendOption {
  enum class Kind { kFlag, kValue, kList };
  BackendOption(std::string flags_, Kind kind_, std::string help_, std::string default_text_ = "",
                std::vector<std::string> choices_ = {})
      : flags(std::move(flags_)),
        kind(kind_),
        help(std::move(help_)),
        default_text(std::move(default_text_)),
        choices(std::move(choices_)) {}

  std::string flags;  // "--providers,--execution-providers": the first is the canonical name
  Kind kind = Kind::kValue;
  std::string help;
  std::string default_text;          // shown by --help; empty when there is none to show
  std::vector<std::string> choices;  // the valid values; empty when any value is accepted

  // The canonical flag without its dashes: "providers".
  std::string name() const;
};

// The values given for a backend's options, by canonical name; options not given keep their
// defaults. The typed getters raise UsageError naming the flag, the value and the rule.
class BackendOptionValues {
 public:
  void set(const std::string& name, std::vector<std::string> values);
  bool given(const std::string& name) const;
  bool flag(const std::string& name) const;
  std::string value(const std::string& name, const std::string& fallback) const;
  std::vector<std::string> list(const std::string& name,
                                const std::vector<std::string>& fallback) const;
  int64_t integer(const std::string& name, int64_t fallback, int64_t min, int64_t max) const;
  const std::map<std::string, std::vector<std::string>>& all() const { return values_; }

 private:
  std::map<std::string, std::vector<std::string>> values_;
};

// What --gen-script writes for one runner: the import lines it needs and the Python
// expression that makes the runner from the loaded model, which the script calls `model`.
struct RunnerScript {
  std::vector<std::string> imports;
  std::string expression;
};

// Called after every node a backend runs, with the values the node produced.
using NodeObserver = std::function<void(const ir::Node&, const std::vector<Value>&)>;

struct Backend {
  std::string name;   // "pluginref", "onnxrt": the Python name and the runner name's prefix
  std::string flags;  // "--pluginref,--ref": selects a runner of this backend in `parity run`
  std::string help;   // one line for --help
  std::string group;  // the title of its option group in --help
  std::vector<BackendOption> options;
  // Lower comes first in --help and in registry listings.
  int rank = 100;
  // Polygraphy's runner of this backend opens an unmodified model file itself (ONNX Runtime's
  // session made from the path), so activating it prints no "Loading model: ..." line.
  bool opens_model_file = false;

  // Parses the option values once, before any work (UsageError for a malformed value); the
  // result is what the other hooks receive as `config`.
  std::function<std::any(const BackendOptionValues&)> configure;
  // A runner for the model (loaded when the runner is activated). `name` may be empty.
  std::function<std::unique_ptr<Runner>(Loader<ModelPtr> model, const std::any& config,
                                        const std::string& name)>
      make_runner;
  // What --gen-script writes for a runner of this backend.
  std::function<RunnerScript(const std::any& config)> script;

  // Layer-wise comparison. Both hooks are optional.
  // The values of `names` (tensors of the model) for `feed`. Without it, the model is run on a
  // runner of this backend with exactly `names` marked as outputs.
  std::function<TensorMap(const ModelPtr& model, const std::any& config, const TensorMap& feed,
                          const std::vector<std::string>& names)>
      fetch_tensors;
  // Runs an active runner of this backend on `feed`, calling `observer` after every node of
  // the top-level graph: a backend with this hook can be the streaming side of a layer-wise
  // comparison, holding nothing it has compared.
  std::function<TensorMap(Runner& runner, const TensorMap& feed, const NodeObserver& observer)>
      run_observed;
  // The configuration for runners that each compute one batch of a layer-wise run and are
  // then released (optional): ONNX Runtime turns its CPU memory arena off there, so that what
  // a batch allocated goes back to the system and peak memory follows --mark-budget.
  std::function<std::any(const std::any& config)> for_batches;

  // Known causes of a disagreement (optional): one message per place where this backend is
  // known to depart from the ONNX specification on the nodes that the failing values depend
  // on (ONNX Runtime's list: docs/onnxruntime-departures.md).
  std::function<std::vector<std::string>(const ir::Model& model,
                                         const std::vector<std::string>& failing_values)>
      known_departures;

  // The flags, split: {"--pluginref", "--ref"}.
  std::vector<std::string> flag_list() const;
};

// A backend with its options parsed: what `run` makes runners from.
struct ConfiguredBackend {
  const Backend* backend = nullptr;
  std::any config;

  std::unique_ptr<Runner> make_runner(Loader<ModelPtr> model, const std::string& name = "") const;
  // This backend configured for short-lived batch runners (Backend::for_batches), or itself.
  ConfiguredBackend for_batches() const;
  // The backend's fetch_tensors, or a runner named `runner_name` on the model with exactly
  // `names` marked.
  TensorMap fetch_tensors(const ModelPtr& model, const TensorMap& feed,
                          const std::vector<std::string>& names,
                          const std::string& runner_name = "") const;
};

class BackendRegistry {
 public:
  static BackendRegistry& global();

  // Adds a backend. A name or flag that is already taken is an Error (two backends cannot
  // answer one flag).
  void add(Backend backend);
  const Backend* find(const std::string& name) const;
  // By one of its flags ("--ref") or its name.
  const Backend* find_flag(const std::string& flag) const;
  // Every backend, by rank then name.
  std::vector<const Backend*> all() const;
  // "pluginref, onnxrt": for messages listing the valid choices.
  std::string names() const;
  // The backend registered under `name`, configured; UsageError naming the valid choices when
  // there is none.
  ConfiguredBackend configure(const std::string& name, const BackendOptionValues& values) const;

 private:
  mutable std::mutex mutex_;
  std::deque<Backend> backends_;  // a deque: pointers stay valid as backends are added
};

namespace detail {
bool register_backend(Backend backend);
}  // namespace detail

#define PARITY_BACKEND_CONCAT_(a, b) a##b
#define PARITY_BACKEND_CONCAT(a, b) PARITY_BACKEND_CONCAT_(a, b)
// Registers a backend when the program starts: PARITY_REGISTER_BACKEND(make_my_backend()).
#define PARITY_REGISTER_BACKEND(backend)                                          \
  static const bool PARITY_BACKEND_CONCAT(parity_backend_registered_, __LINE__) = \
      ::parity::detail::register_backend(backend)

}  // namespace parity
