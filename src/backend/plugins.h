// Loading plugin libraries (`parity run --plugins lib.so`, parity.load_plugin in Python): a
// library may serve reference kernels for custom ops (parity_register_ops), backends
// (parity_register_backends), or both; see plugin_api.h and docs/plugins.md.
//
// The backend layer serves the backend entry point itself (backend/plugin_backend.cc) and lets
// the reference backend serve the op entry point (set_op_plugin_loader), so that a caller
// needs no backend's own header to load a plugin.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace parity {

struct LoadedPlugin {
  std::string path;
  std::vector<std::string> ops;       // "<domain>::<op_type>"
  std::vector<std::string> backends;  // backend names
};

// Loads the library and registers what it serves. Throws Error when it cannot be opened,
// exports neither entry point, was built for another interface version, or its entry point
// reports a failure. Loading a library again registers its ops again (replacing later
// registrations of them) and keeps its backends as they are.
LoadedPlugin load_plugin(const std::string& path);

// The loader of op plugins: registers the ops of the library at `path` and returns their
// names (ref::load_plugin).
using OpPluginLoader = std::function<std::vector<std::string>(const std::string& path)>;
void set_op_plugin_loader(OpPluginLoader loader);

// Registers the backends of a library already opened with dlopen (plugin_backend.cc).
std::vector<std::string> register_plugin_backends(void* library, const std::string& path);

}  // namespace parity
