// Lazy loaders (Polygraphy's BaseLoader): a loader holds its arguments, which may be values or
// other loaders, and builds its object only when called. A whole pipeline is described first
// and loaded later:
//
//   auto model  = OnnxFromPath("model.onnx");
//   auto marked = ModifyOutputs(model, {}, /*mark_all=*/true);
//   auto runner = std::make_unique<PluginRefRunner>(GraphFromOnnx(marked));
//
// extend(loader, fn) runs fn on what the loader built and passes that on (fn returning void),
// or passes fn's own result on (fn returning a value): the way to reach a backend's own
// objects without leaving the pipeline.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

namespace parity {

template <typename T>
class Loader {
 public:
  using value_type = T;

  Loader() = default;
  // From a value: calling returns it.
  Loader(T value) : fn_([v = std::move(value)] { return v; }) {}  // NOLINT: implicit by design
  // From anything callable with no arguments that returns T.
  template <typename F, typename = std::enable_if_t<std::is_invocable_r_v<T, F> &&
                                                    !std::is_convertible_v<F, T>>>
  Loader(F fn) : fn_(std::move(fn)) {}  // NOLINT: implicit by design

  T operator()() const { return fn_(); }
  explicit operator bool() const { return static_cast<bool>(fn_); }

 private:
  std::function<T()> fn_;
};

template <typename T, typename F>
auto extend(Loader<T> loader, F fn) {
  using R = std::invoke_result_t<F, T&>;
  if constexpr (std::is_void_v<R>) {
    return Loader<T>([loader, fn]() mutable {
      T value = loader();
      fn(value);
      return value;
    });
  } else {
    return Loader<R>([loader, fn]() mutable {
      T value = loader();
      return fn(value);
    });
  }
}

}  // namespace parity
