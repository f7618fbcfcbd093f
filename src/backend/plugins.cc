#include "backend/plugins.h"

#include <dlfcn.h>

#include <map>
#include <mutex>

#include "backend/plugin_api.h"
#include "core/error.h"
#include "core/logger.h"

namespace parity {

namespace {

struct PluginLoaders {
  std::mutex mutex;
  OpPluginLoader ops;
  std::map<std::string, LoadedPlugin> loaded;  // by path as given
};

PluginLoaders& loaders() {
  static PluginLoaders l;
  return l;
}

}  // namespace

void set_op_plugin_loader(OpPluginLoader loader) { loaders().ops = std::move(loader); }

LoadedPlugin load_plugin(const std::string& path) {
  PluginLoaders& l = loaders();
  std::lock_guard lock(l.mutex);
  // A library loaded again registers its ops again (replacing later registrations of the same
  // ops, as ref::load_plugin documents); its backends are registered once.
  const auto earlier = l.loaded.find(path);
  const bool again = earlier != l.loaded.end();
  // Opened here only to see which entry points it has; each loader opens it again (dlopen
  // counts references), and the library stays loaded while anything of it is registered.
  void* probe = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!probe) {
    const char* why = dlerror();
    fail(
        "failed to load plugin library '{}' with dlopen: {}; give the path of a shared library "
        "built for this machine",
        path, why ? why : "unknown error");
  }
  const bool has_ops = dlsym(probe, PARITY_PLUGIN_ENTRY_POINT) != nullptr;
  const bool has_backends = dlsym(probe, PARITY_BACKEND_ENTRY_POINT) != nullptr;
  LoadedPlugin info{path, {}, {}};
  try {
    if (!has_ops && !has_backends)
      fail(
          "failed to load plugin library '{}': it exports neither '{}' (reference kernels for "
          "custom ops) nor '{}' (backends); see docs/plugins.md",
          path, PARITY_PLUGIN_ENTRY_POINT, PARITY_BACKEND_ENTRY_POINT);
    if (has_backends)
      info.backends = again ? earlier->second.backends : register_plugin_backends(probe, path);
    if (has_ops) {
      if (!l.ops)
        fail(
            "failed to load the ops of plugin library '{}': no backend of this build takes op "
            "plugins",
            path);
      info.ops = l.ops(path);
    }
  } catch (...) {
    if (info.backends.empty() || again) dlclose(probe);
    throw;
  }
  // The op loader and a registered backend hold their own references.
  if (info.backends.empty() || again) dlclose(probe);
  l.loaded[path] = info;
  return info;
}

}  // namespace parity
