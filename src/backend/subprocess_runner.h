// A runner that runs another runner in a child process (Polygraphy's --use-subprocess), so that
// a crash in a backend or a plugin (a segfault, an abort, an exit() in a library) becomes this
// runner's clear error instead of the end of the whole run.
//
// activate() forks; the child keeps its copy of the wrapped runner (made before the fork, not
// yet active) and answers one request at a time over a socket pair: activate, input metadata,
// infer, deactivate. Feeds and outputs cross as raw tensor bytes. The child's log lines go to
// the same terminal, in order, since the parent waits for each answer.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>

#include "backend/runner.h"

namespace parity {

struct SubprocessOptions {
  // Seconds to wait for one answer (activation, one inference) before the child is killed;
  // nullopt waits as long as the child lives.
  std::optional<double> timeout;
};

// Run around the fork() that starts each child, for a host whose state a fork must know of:
// the Python module registers CPython's fork protocol (the forking thread must hold the GIL, or
// a child whose copy of the GIL belonged to another thread waits for it forever). Any may be
// null; set once, before any runner is activated.
struct ForkHooks {
  void (*before)() = nullptr;
  void (*after_in_parent)() = nullptr;
  void (*after_in_child)() = nullptr;
};
void set_fork_hooks(const ForkHooks& hooks);

class SubprocessRunner final : public Runner {
 public:
  // Owns `inner`.
  explicit SubprocessRunner(std::unique_ptr<Runner> inner, SubprocessOptions options = {});
  // Borrows `inner`, which must outlive this runner (a runner owned by Python).
  explicit SubprocessRunner(Runner& inner, SubprocessOptions options = {});
  ~SubprocessRunner() override;

  std::optional<bool> supports(const ir::Node& node, int64_t opset) const override {
    return inner_->supports(node, opset);
  }

 protected:
  void activate_impl() override;
  void deactivate_impl() override;
  TensorMetadata input_metadata_impl() override;
  TensorMap infer_impl(const TensorMap& feed) override;

 private:
  // Sends one request and returns the child's answer (its payload), or throws the error the
  // child reported, or the one describing how the child died.
  std::string call(char request, const std::string& payload, const char* doing);
  [[noreturn]] void child_died(const char* doing, const std::string& detail);
  void reap();

  std::unique_ptr<Runner> owned_;
  Runner* inner_;
  SubprocessOptions options_;
  pid_t child_ = -1;
  int socket_ = -1;
  static constexpr size_t kActivityBytes = 4096;
  char* activity_ = nullptr;  // shared with the child: what it is running
};

}  // namespace parity
