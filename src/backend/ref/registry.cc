#include "backend/ref/registry.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "core/names.h"

namespace parity::ref {

Registry& Registry::global() {
  static Registry registry;
  return registry;
}

void Registry::add(KernelEntry entry) {
  if (entry.domain == "ai.onnx") entry.domain.clear();
  PARITY_ENFORCE(entry.since <= entry.until && entry.factory, "bad registration of {}",
                 entry.op_type);
  std::lock_guard lock(mutex_);
  for (auto& e : entries_)
    if (e.domain == entry.domain && e.op_type == entry.op_type && e.since == entry.since &&
        e.until == entry.until) {
      e = std::move(entry);
      return;
    }
  entries_.push_back(std::move(entry));
}

const KernelEntry* Registry::find(const std::string& domain, const std::string& op_type,
                                  int64_t opset) const {
  const std::string& d = domain == "ai.onnx" ? std::string() : domain;
  std::lock_guard lock(mutex_);
  // The latest registration wins when ranges overlap (a plugin narrowing a built-in range).
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it)
    if (it->domain == d && it->op_type == op_type && it->since <= opset && opset <= it->until)
      return &*it;
  return nullptr;
}

bool Registry::has_op(const std::string& domain, const std::string& op_type) const {
  const std::string& d = domain == "ai.onnx" ? std::string() : domain;
  std::lock_guard lock(mutex_);
  return std::any_of(entries_.begin(), entries_.end(),
                     [&](const KernelEntry& e) { return e.domain == d && e.op_type == op_type; });
}

std::vector<std::string> Registry::op_types(const std::string& domain) const {
  const std::string& d = domain == "ai.onnx" ? std::string() : domain;
  std::set<std::string> names;
  {
    std::lock_guard lock(mutex_);
    for (const auto& e : entries_)
      if (e.domain == d) names.insert(e.op_type);
  }
  return {names.begin(), names.end()};
}

std::vector<KernelEntry> Registry::entries() const {
  std::lock_guard lock(mutex_);
  return entries_;
}

std::vector<std::string> Registry::nearest(const std::string& op_type, size_t count) const {
  std::set<std::string> names;
  {
    std::lock_guard lock(mutex_);
    for (const auto& e : entries_) names.insert(e.op_type);
  }
  return nearest_names(op_type, std::vector<std::string>(names.begin(), names.end()), count);
}

KernelRegistration::KernelRegistration(const char* domain, const char* op_type, int64_t since,
                                       int64_t until, KernelFactory factory) {
  Registry::global().add(KernelEntry{domain, op_type, since, until, std::move(factory), ""});
}

}  // namespace parity::ref
