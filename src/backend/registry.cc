#include "backend/registry.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "core/error.h"
#include "onnx/model_io.h"

namespace parity {

namespace {

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

std::string strip_dashes(const std::string& flag) {
  size_t i = 0;
  while (i < flag.size() && flag[i] == '-') ++i;
  return flag.substr(i);
}

}  // namespace

std::string BackendOption::name() const {
  const std::vector<std::string> all = split_commas(flags);
  return all.empty() ? "" : strip_dashes(all.front());
}

void BackendOptionValues::set(const std::string& name, std::vector<std::string> values) {
  values_[name] = std::move(values);
}

bool BackendOptionValues::given(const std::string& name) const { return values_.count(name) > 0; }

bool BackendOptionValues::flag(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return false;
  return it->second.empty() || it->second.back() != "false";
}

std::string BackendOptionValues::value(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() || it->second.empty() ? fallback : it->second.back();
}

std::vector<std::string> BackendOptionValues::list(const std::string& name,
                                                   const std::vector<std::string>& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

int64_t BackendOptionValues::integer(const std::string& name, int64_t fallback, int64_t min,
                                     int64_t max) const {
  if (!given(name)) return fallback;
  const std::string text = value(name, "");
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < min || v > max)
    fail_usage("failed to parse --{} with value '{}': it must be an integer in [{}, {}]", name,
               text, min, max);
  return v;
}

std::vector<std::string> Backend::flag_list() const { return split_commas(flags); }

ConfiguredBackend ConfiguredBackend::for_batches() const {
  if (!backend || !backend->for_batches) return *this;
  return ConfiguredBackend{backend, backend->for_batches(config)};
}

std::unique_ptr<Runner> ConfiguredBackend::make_runner(Loader<ModelPtr> model,
                                                       const std::string& name) const {
  return backend->make_runner(std::move(model), config, name);
}

TensorMap ConfiguredBackend::fetch_tensors(const ModelPtr& model, const TensorMap& feed,
                                           const std::vector<std::string>& names,
                                           const std::string& runner_name) const {
  if (backend->fetch_tensors) return backend->fetch_tensors(model, config, feed, names);
  // The marked copy is made when the runner is activated and not held after: a backend that
  // copies the model (ONNX Runtime does) then holds the only copy while it runs.
  std::unique_ptr<Runner> runner =
      make_runner(Loader<ModelPtr>([model, names] {
                    return onnx_io::modify_outputs(*model, names, /*mark_all=*/false, {});
                  }),
                  runner_name);
  RunnerActivation active(*runner);
  return runner->infer(feed);
}

BackendRegistry& BackendRegistry::global() {
  static BackendRegistry registry;
  return registry;
}

void BackendRegistry::add(Backend backend) {
  std::lock_guard lock(mutex_);
  if (backend.name.empty() || backend.flags.empty() || !backend.configure || !backend.make_runner)
    fail(
        "failed to register backend '{}': a backend needs a name, a flag, configure() and "
        "make_runner()",
        backend.name);
  for (const Backend& b : backends_) {
    if (b.name == backend.name)
      fail("failed to register backend '{}': a backend of that name is already registered",
           backend.name);
    for (const std::string& flag : backend.flag_list()) {
      const std::vector<std::string> taken = b.flag_list();
      if (std::find(taken.begin(), taken.end(), flag) != taken.end())
        fail("failed to register backend '{}': its flag {} is taken by backend '{}'", backend.name,
             flag, b.name);
    }
  }
  backends_.push_back(std::move(backend));
}

const Backend* BackendRegistry::find(const std::string& name) const {
  std::lock_guard lock(mutex_);
  for (const Backend& b : backends_)
    if (b.name == name) return &b;
  return nullptr;
}

const Backend* BackendRegistry::find_flag(const std::string& flag) const {
  std::lock_guard lock(mutex_);
  for (const Backend& b : backends_) {
    if (b.name == flag) return &b;
    const std::vector<std::string> flags = b.flag_list();
    if (std::find(flags.begin(), flags.end(), flag) != flags.end()) return &b;
  }
  return nullptr;
}

std::vector<const Backend*> BackendRegistry::all() const {
  std::lock_guard lock(mutex_);
  std::vector<const Backend*> out;
  for (const Backend& b : backends_) out.push_back(&b);
  std::stable_sort(out.begin(), out.end(), [](const Backend* a, const Backend* b) {
    return a->rank != b->rank ? a->rank < b->rank : a->name < b->name;
  });
  return out;
}

std::string BackendRegistry::names() const {
  std::vector<std::string> names;
  for (const Backend* b : all()) names.push_back(b->name);
  return fmt::format("{}", fmt::join(names, ", "));
}

ConfiguredBackend BackendRegistry::configure(const std::string& name,
                                             const BackendOptionValues& values) const {
  const Backend* backend = find_flag(name);
  if (!backend)
    fail_usage(
        "failed to find backend '{}': no backend of that name is registered; valid "
        "choices are {}",
        name, names());
  return ConfiguredBackend{backend, backend->configure(values)};
}

namespace detail {
bool register_backend(Backend backend) {
  BackendRegistry::global().add(std::move(backend));
  return true;
}
}  // namespace detail

}  // namespace parity
