#include "backend/onnxrt/ort_api.h"

#include <fmt/format.h>

#include "core/error.h"

namespace parity::ort {

namespace {

// Reads slot `index` of the table as the function-pointer type of `fn`. The index is checked
// at compile time against the version-17 table so that no newer slot is ever bound.
template <size_t index, typename F>
void bind(F& fn, void* const* slots) {
  static_assert(index < kSlotCount, "slot is not part of the version-17 API");
  fn = reinterpret_cast<F>(slots[index]);
}

}  // namespace

Api bind_api(const void* table) {
  auto slots = static_cast<void* const*>(table);
  Api api{};
  bind<1>(api.GetErrorCode, slots);
  bind<2>(api.GetErrorMessage, slots);
  bind<3>(api.CreateEnv, slots);
  bind<7>(api.CreateSession, slots);
  bind<8>(api.CreateSessionFromArray, slots);
  bind<9>(api.Run, slots);
  bind<10>(api.CreateSessionOptions, slots);
  bind<11>(api.SetOptimizedModelFilePath, slots);
  bind<19>(api.DisableCpuMemArena, slots);
  bind<22>(api.SetSessionLogSeverityLevel, slots);
  bind<23>(api.SetSessionGraphOptimizationLevel, slots);
  bind<24>(api.SetIntraOpNumThreads, slots);
  bind<29>(api.RegisterCustomOpsLibrary, slots);
  bind<30>(api.SessionGetInputCount, slots);
  bind<31>(api.SessionGetOutputCount, slots);
  bind<33>(api.SessionGetInputTypeInfo, slots);
  bind<34>(api.SessionGetOutputTypeInfo, slots);
  bind<36>(api.SessionGetInputName, slots);
  bind<37>(api.SessionGetOutputName, slots);
  bind<48>(api.CreateTensorAsOrtValue, slots);
  bind<49>(api.CreateTensorWithDataAsOrtValue, slots);
  bind<51>(api.GetTensorMutableData, slots);
  bind<52>(api.FillStringTensor, slots);
  bind<53>(api.GetStringTensorDataLength, slots);
  bind<54>(api.GetStringTensorContent, slots);
  bind<55>(api.CastTypeInfoToTensorInfo, slots);
  bind<56>(api.GetOnnxTypeFromTypeInfo, slots);
  bind<60>(api.GetTensorElementType, slots);
  bind<61>(api.GetDimensionsCount, slots);
  bind<62>(api.GetDimensions, slots);
  bind<63>(api.GetSymbolicDimensions, slots);
  bind<65>(api.GetTensorTypeAndShape, slots);
  bind<67>(api.GetValueType, slots);
  bind<69>(api.CreateCpuMemoryInfo, slots);
  bind<76>(api.AllocatorFree, slots);
  bind<78>(api.GetAllocatorWithDefaultOptions, slots);
  bind<80>(api.GetValue, slots);
  bind<81>(api.GetValueCount, slots);
  bind<82>(api.CreateValue, slots);
  bind<92>(api.ReleaseEnv, slots);
  bind<93>(api.ReleaseStatus, slots);
  bind<94>(api.ReleaseMemoryInfo, slots);
  bind<95>(api.ReleaseSession, slots);
  bind<96>(api.ReleaseValue, slots);
  bind<98>(api.ReleaseTypeInfo, slots);
  bind<103>(api.CastTypeInfoToMapTypeInfo, slots);
  bind<104>(api.CastTypeInfoToSequenceTypeInfo, slots);
  bind<105>(api.GetMapKeyType, slots);
  bind<106>(api.GetMapValueType, slots);
  bind<107>(api.GetSequenceElementType, slots);
  bind<99>(api.ReleaseTensorTypeAndShapeInfo, slots);
  bind<100>(api.ReleaseSessionOptions, slots);
  bind<125>(api.GetAvailableProviders, slots);
  bind<126>(api.ReleaseAvailableProviders, slots);
  bind<170>(api.SessionOptionsAppendExecutionProvider_TensorRT_V2, slots);
  bind<171>(api.CreateTensorRTProviderOptions, slots);
  bind<172>(api.UpdateTensorRTProviderOptions, slots);
  bind<174>(api.ReleaseTensorRTProviderOptions, slots);
  bind<204>(api.SessionOptionsAppendExecutionProvider_CUDA_V2, slots);
  bind<205>(api.CreateCUDAProviderOptions, slots);
  bind<206>(api.UpdateCUDAProviderOptions, slots);
  bind<208>(api.ReleaseCUDAProviderOptions, slots);
  bind<210>(api.AddExternalInitializers, slots);
  bind<216>(api.SessionOptionsAppendExecutionProvider, slots);
  bind<254>(api.GetBuildInfoString, slots);
  return api;
}

void check(const Api& api, Status* status, std::string_view what) {
  if (!status) return;
  const char* raw = api.GetErrorMessage(status);
  std::string message = raw ? raw : "(no message)";
  api.ReleaseStatus(status);
  // ONNX Runtime's messages often end with a newline; one line reads better in Parity's log.
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  fail("ONNX Runtime failed to {}: {}", what, message);
}

}  // namespace parity::ort
