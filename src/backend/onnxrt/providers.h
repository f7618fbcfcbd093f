// Execution providers: choosing them by name and adding them to a session's options.
#pragma once

#include <string>
#include <vector>

#include "backend/onnxrt/library.h"

namespace parity {

// The providers this ONNX Runtime build lists, in its order ("CPUExecutionProvider", ...).
// A listed provider may still fail to start: the npm build lists CUDA and TensorRT without
// shipping their libraries.
std::vector<std::string> available_providers(const OrtRuntime& runtime);

// Maps each requested name to an available provider, keeping the priority order: an exact
// match first, else the one provider that matches by case-insensitive substring (either name
// inside the other, as Polygraphy matches: "cpu" -> "CPUExecutionProvider"). A name matching
// none, or several, is an Error listing the available providers.
std::vector<std::string> resolve_providers(const std::vector<std::string>& requested,
                                           const std::vector<std::string>& available);

struct ProviderOption {
  std::string key;
  std::string value;
};
// Parses "key=value" strings (--provider-option); anything else is a UsageError.
std::vector<ProviderOption> parse_provider_options(const std::vector<std::string>& options);

// Adds the resolved providers to `session_options` in priority order. CPU needs no call (ONNX
// Runtime always keeps it as the last fallback); CUDA and TensorRT go through their own API
// calls, the others through the generic one. Every option is passed to every provider added.
// A provider that cannot start is an Error carrying ONNX Runtime's reason.
void append_providers(const OrtRuntime& runtime, ort::SessionOptions* session_options,
                      const std::vector<std::string>& providers,
                      const std::vector<ProviderOption>& options);

}  // namespace parity
