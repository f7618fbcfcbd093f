// The registry of reference kernels, filled by PARITY_REF_OP lines at start-up and by
// plugins (C++ libraries, Python functions) at run time.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "backend/ref/kernel.h"

namespace parity::ref {

struct KernelEntry {
  std::string domain;
  std::string op_type;
  int64_t since = 1;
  int64_t until = kOpsetMax;
  KernelFactory factory;
  // Where the kernel comes from, for messages about a crash inside it: "" for Parity's own,
  // "plugin library <path>", "Python op".
  std::string origin;
};

class Registry {
 public:
  static Registry& global();

  // A later registration for the same (domain, op, range) replaces the earlier one, so a
  // plugin can override a built-in kernel.
  void add(KernelEntry entry);
  // The kernel for `op_type` in `domain` at `opset`, or nullptr.
  const KernelEntry* find(const std::string& domain, const std::string& op_type,
                          int64_t opset) const;
  bool has_op(const std::string& domain, const std::string& op_type) const;
  std::vector<std::string> op_types(const std::string& domain) const;
  std::vector<KernelEntry> entries() const;
  // Registered op names closest to `op_type` (edit distance), for error messages.
  std::vector<std::string> nearest(const std::string& op_type, size_t count = 3) const;

 private:
  mutable std::mutex mutex_;
  std::vector<KernelEntry> entries_;
};

}  // namespace parity::ref
