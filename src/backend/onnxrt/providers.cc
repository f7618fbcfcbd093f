#include "backend/onnxrt/providers.h"

#include <algorithm>
#include <cctype>

#include "core/error.h"

namespace parity {

namespace {

constexpr const char* kCpu = "CPUExecutionProvider";
constexpr const char* kCuda = "CUDAExecutionProvider";
constexpr const char* kTensorRt = "TensorrtExecutionProvider";

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// Python's list rendering, as Polygraphy prints the available providers: ['A', 'B'].
std::string python_list(const std::vector<std::string>& names) {
  std::vector<std::string> quoted;
  for (const auto& n : names) quoted.push_back(fmt::format("'{}'", n));
  return fmt::format("[{}]", fmt::join(quoted, ", "));
}

// Keys and values as the C arrays the provider-option calls take.
struct OptionArrays {
  std::vector<const char*> keys, values;
  explicit OptionArrays(const std::vector<ProviderOption>& options) {
    for (const auto& o : options) {
      keys.push_back(o.key.c_str());
      values.push_back(o.value.c_str());
    }
  }
};

// ONNX Runtime's reason plus, when it could not load a provider library, where those
// libraries must be: the npm package lists CUDA and TensorRT but does not ship them.
[[noreturn]] void fail_provider(const OrtRuntime& runtime, const std::string& provider,
                                const Error& error) {
  std::string message = error.what();
  if (message.find("load") != std::string::npos && message.find("librar") != std::string::npos)
    message += fmt::format(
        "; {} needs its provider libraries (libonnxruntime_providers_shared.so and the "
        "provider's own) in the folder of {}, which this ONNX Runtime build does not have",
        provider, runtime.library().path());
  fail("{}", message);
}

template <typename Options>
void append_with_own_call(
    const OrtRuntime& runtime, ort::SessionOptions* session_options, const std::string& provider,
    const std::vector<ProviderOption>& options, ort::Status* (*create)(Options**),
    ort::Status* (*update)(Options*, const char* const*, const char* const*, size_t),
    void (*release)(Options*), ort::Status* (*append)(ort::SessionOptions*, const Options*)) {
  const ort::Api& api = runtime.api();
  std::string what = "enable the execution provider " + provider;
  Options* provider_options = nullptr;
  try {
    ort::check(api, create(&provider_options), what);
    OptionArrays arrays(options);
    if (!options.empty())
      ort::check(api,
                 update(provider_options, arrays.keys.data(), arrays.values.data(), options.size()),
                 "set the options of " + provider);
    ort::check(api, append(session_options, provider_options), what);
  } catch (const Error& e) {
    if (provider_options) release(provider_options);
    fail_provider(runtime, provider, e);
  }
  release(provider_options);
}

}  // namespace

std::vector<std::string> available_providers(const OrtRuntime& runtime) {
  const ort::Api& api = runtime.api();
  char** list = nullptr;
  int count = 0;
  ort::check(api, api.GetAvailableProviders(&list, &count), "list its execution providers");
  std::vector<std::string> names(list, list + count);
  ort::check(api, api.ReleaseAvailableProviders(list, count), "release its provider list");
  return names;
}

std::vector<std::string> resolve_providers(const std::vector<std::string>& requested,
                                           const std::vector<std::string>& available) {
  std::vector<std::string> resolved;
  for (const std::string& name : requested) {
    if (std::find(available.begin(), available.end(), name) != available.end()) {
      resolved.push_back(name);
      continue;
    }
    std::string wanted = lower(name);
    std::vector<std::string> matches;
    for (const std::string& candidate : available) {
      std::string have = lower(candidate);
      if (!wanted.empty() &&
          (have.find(wanted) != std::string::npos || wanted.find(have) != std::string::npos))
        matches.push_back(candidate);
    }
    if (matches.empty())
      fail(
          "Could not find specified ONNX-Runtime execution provider.\nNote: Requested "
          "provider was: {}, but available providers are: {}",
          name, python_list(available));
    if (matches.size() > 1)
      fail(
          "failed to select the ONNX-Runtime execution provider with '{}': it matches {}; "
          "give a longer part of one name. Available providers are: {}",
          name, python_list(matches), python_list(available));
    resolved.push_back(matches.front());
  }
  return resolved;
}

std::vector<ProviderOption> parse_provider_options(const std::vector<std::string>& options) {
  std::vector<ProviderOption> parsed;
  for (const std::string& option : options) {
    size_t eq = option.find('=');
    if (eq == std::string::npos || eq == 0)
      fail_usage(
          "failed to parse the provider option '{}': it must be key=value; for "
          "example device_id=0",
          option);
    parsed.push_back({option.substr(0, eq), option.substr(eq + 1)});
  }
  return parsed;
}

void append_providers(const OrtRuntime& runtime, ort::SessionOptions* session_options,
                      const std::vector<std::string>& providers,
                      const std::vector<ProviderOption>& options) {
  const ort::Api& api = runtime.api();
  for (const std::string& provider : providers) {
    if (provider == kCpu) continue;
    if (provider == kCuda) {
      append_with_own_call(runtime, session_options, provider, options,
                           api.CreateCUDAProviderOptions, api.UpdateCUDAProviderOptions,
                           api.ReleaseCUDAProviderOptions,
                           api.SessionOptionsAppendExecutionProvider_CUDA_V2);
    } else if (provider == kTensorRt) {
      append_with_own_call(runtime, session_options, provider, options,
                           api.CreateTensorRTProviderOptions, api.UpdateTensorRTProviderOptions,
                           api.ReleaseTensorRTProviderOptions,
                           api.SessionOptionsAppendExecutionProvider_TensorRT_V2);
    } else {
      // The generic call takes ONNX Runtime's full provider names (and short ones).
      OptionArrays arrays(options);
      try {
        ort::check(api,
                   api.SessionOptionsAppendExecutionProvider(session_options, provider.c_str(),
                                                             arrays.keys.data(),
                                                             arrays.values.data(), options.size()),
                   "enable the execution provider " + provider);
      } catch (const Error& e) {
        fail_provider(runtime, provider, e);
      }
    }
  }
}

}  // namespace parity
