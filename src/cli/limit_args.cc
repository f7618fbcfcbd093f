#include "cli/limit_args.h"

#include "cli/option_checks.h"
#include "cli/parse_util.h"
#include "core/error.h"
#include "core/limits.h"

namespace parity::cli {

void add_limit_args(CLI::App& app) {
  constexpr const char* kGroup = "Reference Runner Limits";
  ResourceLimits& limits = default_limits();
  check_range(
      app.add_option_function<int64_t>(
          "--limit-tensor-elements", [&limits](int64_t n) { limits.max_tensor_elements = n; },
          fmt::format("Most elements one tensor may hold (reference backend, generated and loaded "
                      "data). Defaults to {}",
                      ResourceLimits::kDefaultMaxTensorElements)),
      int64_t{1}, INT64_MAX)
      ->group(kGroup);
  app.add_option_function<std::string>(
         "--limit-memory",
         [&limits](const std::string& text) {
           // The sizes --mark-budget takes: bytes with an optional K, M, G or T. Thrown while
           // CLI11 parses, so the error must be CLI11's to become a usage error.
           try {
             limits.max_memory_bytes =
                 static_cast<int64_t>(parse_byte_size("--limit-memory", text));
           } catch (const UsageError& e) {
             throw CLI::ValidationError(e.what());
           }
         },
         "Most bytes the reference backend may hold in tensors at once, e.g. 8G. Defaults to "
         "three quarters of physical memory")
      ->group(kGroup);
  check_range(
      app.add_option_function<int64_t>(
          "--limit-loop-iterations", [&limits](int64_t n) { limits.max_loop_iterations = n; },
          fmt::format("Most iterations of one Loop node on the reference backend. Defaults to {}",
                      ResourceLimits::kDefaultMaxLoopIterations)),
      int64_t{1}, INT64_MAX)
      ->group(kGroup);
  check_range(app.add_option_function<double>(
                  "--limit-run-seconds", [&limits](double s) { limits.max_run_seconds = s; },
                  "Most wall-clock seconds one inference on the reference backend may take; 0 (the "
                  "default) means no limit"),
              0.0, 1e9)
      ->group(kGroup);
}

}  // namespace parity::cli
