// The backend option groups, made from the backend registry: one flag per backend that adds a
// runner of it (in command-line order, so `--onnxrt --pluginref` compares in that order and
// `--pluginref --pluginref` compares the reference with itself), and each backend's own group.
#pragma once

#include <map>
#include <vector>

#include <CLI/CLI.hpp>

#include "backend/registry.h"

namespace parity::cli {

struct BackendArgs {
  std::vector<const Backend*> selected;               // command-line order
  std::map<std::string, BackendOptionValues> values;  // by backend name, given options only

  // Every selected backend configured (each backend's options parsed once), in order.
  std::vector<ConfiguredBackend> configure() const;
};

// Adds the flags of every registered backend to `app`.
void add_backend_args(CLI::App& app);
// Reads them back after parsing.
BackendArgs collect_backend_args(const CLI::App& app);

}  // namespace parity::cli
