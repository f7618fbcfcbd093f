// Errors. Parity reports every user-facing failure as a parity::Error carrying one message in
// the project's template: what failed, the offending value, the rule, the valid choices.
// Usage errors (a wrong flag, a malformed value) are UsageError, which the CLI maps to exit
// status 2; everything else is exit status 1.
#pragma once

#include <fmt/format.h>
#include <stdexcept>
#include <string>

namespace parity {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A command-line or API argument that cannot be used as given.
class UsageError : public Error {
 public:
  using Error::Error;
};

// A broken invariant inside Parity itself (never the user's fault).
class InternalError : public Error {
 public:
  using Error::Error;
};

template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> f, Args&&... args) {
  throw Error(fmt::format(f, std::forward<Args>(args)...));
}

template <typename... Args>
[[noreturn]] void fail_usage(fmt::format_string<Args...> f, Args&&... args) {
  throw UsageError(fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace parity

// Checks an invariant of Parity's own code; failing means a bug in Parity.
#define PARITY_ENFORCE(cond, ...)                                                             \
  do {                                                                                        \
    if (!(cond))                                                                              \
      throw ::parity::InternalError(fmt::format("internal error at {}:{}: {} ({})", __FILE__, \
                                                __LINE__, #cond, fmt::format(__VA_ARGS__)));  \
  } while (0)
