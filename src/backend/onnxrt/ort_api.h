// The part of ONNX Runtime's C API that Parity uses, declared by hand from the facts of ONNX
// Runtime's public onnxruntime_c_api.h (slot order, signatures); no ONNX Runtime header is
// involved.
//
// The library exports one function, OrtGetApiBase(); its GetApi(version) returns a table of
// function pointers that only ever grows at the end. Parity requests version 17, which every
// ONNX Runtime from 1.17 to 1.30 serves, and binds only slots that exist in version 17 (the
// table has 276 slots there), so one binary works with all of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace parity::ort {

// The API version Parity requests: ONNX Runtime 1.17 is the oldest library it supports.
inline constexpr uint32_t kApiVersion = 17;
inline constexpr int kMinMinorVersion = 17;
// Number of slots in the version-17 table; binding a slot at or past it is a bug.
inline constexpr size_t kSlotCount = 276;

// Opaque handles; ONNX Runtime owns their layout.
struct Env;
struct Status;
struct Session;
struct SessionOptions;
struct RunOptions;
struct Value;
struct TypeInfo;
struct TensorTypeAndShapeInfo;
struct MapTypeInfo;
struct SequenceTypeInfo;
struct MemoryInfo;
struct Allocator;
struct CudaProviderOptionsV2;
struct TensorRtProviderOptionsV2;

// Enum values of the ABI (section 4 of the reference).
enum LoggingLevel : int {
  kLogVerbose = 0,
  kLogInfo = 1,
  kLogWarning = 2,
  kLogError = 3,
  kLogFatal = 4
};
enum OnnxType : int {
  kTypeUnknown = 0,
  kTypeTensor = 1,
  kTypeSequence = 2,
  kTypeMap = 3,
  kTypeOpaque = 4,
  kTypeSparseTensor = 5,
  kTypeOptional = 6
};
enum AllocatorType : int { kDeviceAllocator = 0, kArenaAllocator = 1 };
enum MemType : int { kMemTypeDefault = 0 };
// Tensor element types use ONNX's TensorProto numbering, the same as parity::DataType.
inline constexpr int kElementString = 8;

struct ApiBase {
  const void* (*GetApi)(uint32_t version);
  const char* (*GetVersionString)();
};
using GetApiBaseFn = const ApiBase* (*)();

// Typed pointers to the slots Parity calls. The comment gives the slot index and the first
// ONNX Runtime release that has it ("<=1.14" means older than any header checked).
struct Api {
  int (*GetErrorCode)(const Status*);                                  // 1, <=1.14
  const char* (*GetErrorMessage)(const Status*);                       // 2, <=1.14
  Status* (*CreateEnv)(int log_level, const char* log_id, Env** out);  // 3, <=1.14
  Status* (*CreateSession)(const Env*, const char* model_path,         // 7, <=1.14
                           const SessionOptions*, Session** out);
  Status* (*CreateSessionFromArray)(const Env*, const void* data, size_t len,  // 8, <=1.14
                                    const SessionOptions*, Session** out);
  Status* (*Run)(Session*, const RunOptions*, const char* const* input_names,  // 9, <=1.14
                 const Value* const* inputs, size_t input_count, const char* const* output_names,
                 size_t output_count, Value** outputs);
  Status* (*CreateSessionOptions)(SessionOptions** out);  // 10, <=1.14
  // Where ONNX Runtime saves the model after its graph optimizations (char path on Linux).
  Status* (*SetOptimizedModelFilePath)(SessionOptions*, const char* path);  // 11, <=1.14
  Status* (*DisableCpuMemArena)(SessionOptions*);                           // 19, <=1.14
  Status* (*SetSessionLogSeverityLevel)(SessionOptions*, int level);        // 22, <=1.14
  Status* (*SetSessionGraphOptimizationLevel)(SessionOptions*, int level);  // 23, <=1.14
  Status* (*SetIntraOpNumThreads)(SessionOptions*, int threads);            // 24, <=1.14
  // Loads the library and calls its RegisterCustomOps(options, api_base); the caller owns the
  // returned dlopen handle.
  Status* (*RegisterCustomOpsLibrary)(SessionOptions*, const char* library_path,  // 29, <=1.14
                                      void** library_handle);
  Status* (*SessionGetInputCount)(const Session*, size_t* out);                       // 30, <=1.14
  Status* (*SessionGetOutputCount)(const Session*, size_t* out);                      // 31, <=1.14
  Status* (*SessionGetInputTypeInfo)(const Session*, size_t index, TypeInfo** out);   // 33
  Status* (*SessionGetOutputTypeInfo)(const Session*, size_t index, TypeInfo** out);  // 34
  Status* (*SessionGetInputName)(const Session*, size_t index, Allocator*,            // 36, <=1.14
                                 char** out);
  Status* (*SessionGetOutputName)(const Session*, size_t index, Allocator*,  // 37, <=1.14
                                  char** out);
  Status* (*CreateTensorAsOrtValue)(Allocator*, const int64_t* shape,  // 48, <=1.14
                                    size_t rank, int element_type, Value** out);
  Status* (*CreateTensorWithDataAsOrtValue)(const MemoryInfo*, void* data,  // 49, <=1.14
                                            size_t data_bytes, const int64_t* shape, size_t rank,
                                            int element_type, Value** out);
  Status* (*GetTensorMutableData)(Value*, void** out);                                // 51, <=1.14
  Status* (*FillStringTensor)(Value*, const char* const* strings, size_t count);      // 52
  Status* (*GetStringTensorDataLength)(const Value*, size_t* total_bytes);            // 53, <=1.14
  Status* (*GetStringTensorContent)(const Value*, void* buffer, size_t buffer_bytes,  // 54
                                    size_t* offsets, size_t offset_count);
  // The result is borrowed from the TypeInfo (never released on its own); null if not a tensor.
  Status* (*CastTypeInfoToTensorInfo)(const TypeInfo*,  // 55, <=1.14
                                      const TensorTypeAndShapeInfo** out);
  Status* (*GetOnnxTypeFromTypeInfo)(const TypeInfo*, int* out);                     // 56, <=1.14
  Status* (*GetTensorElementType)(const TensorTypeAndShapeInfo*, int* out);          // 60, <=1.14
  Status* (*GetDimensionsCount)(const TensorTypeAndShapeInfo*, size_t* out);         // 61, <=1.14
  Status* (*GetDimensions)(const TensorTypeAndShapeInfo*, int64_t* dims, size_t n);  // 62
  Status* (*GetSymbolicDimensions)(const TensorTypeAndShapeInfo*,                    // 63, <=1.14
                                   const char** names, size_t n);
  Status* (*GetTensorTypeAndShape)(const Value*, TensorTypeAndShapeInfo** out);  // 65
  Status* (*GetValueType)(const Value*, int* out);                               // 67, <=1.14
  Status* (*CreateCpuMemoryInfo)(int allocator_type, int mem_type,               // 69, <=1.14
                                 MemoryInfo** out);
  Status* (*AllocatorFree)(Allocator*, void* p);               // 76, <=1.14
  Status* (*GetAllocatorWithDefaultOptions)(Allocator** out);  // 78, <=1.14
  // Item `index` of a sequence, or of a map (0: its keys, 1: its values, as tensors); a new
  // value that the caller releases.
  Status* (*GetValue)(const Value*, int index, Allocator*, Value** out);  // 80, <=1.14
  // The number of items of a sequence (2 for a map).
  Status* (*GetValueCount)(const Value*, size_t* out);  // 81, <=1.14
  // A sequence (onnx_type kTypeSequence) of `count` values, or a map (kTypeMap) from two
  // tensors, keys then values; the inputs are copied and stay the caller's.
  Status* (*CreateValue)(const Value* const* in, size_t count, int onnx_type,  // 82, <=1.14
                         Value** out);
  void (*ReleaseEnv)(Env*);                                        // 92, <=1.14
  void (*ReleaseStatus)(Status*);                                  // 93, <=1.14
  void (*ReleaseMemoryInfo)(MemoryInfo*);                          // 94, <=1.14
  void (*ReleaseSession)(Session*);                                // 95, <=1.14
  void (*ReleaseValue)(Value*);                                    // 96, <=1.14
  void (*ReleaseTypeInfo)(TypeInfo*);                              // 98, <=1.14
  void (*ReleaseTensorTypeAndShapeInfo)(TensorTypeAndShapeInfo*);  // 99, <=1.14
  void (*ReleaseSessionOptions)(SessionOptions*);                  // 100, <=1.14
  Status* (*GetAvailableProviders)(char*** out, int* count);       // 125, <=1.14
  // Borrowed from the TypeInfo, as CastTypeInfoToTensorInfo's; null if not a map / sequence.
  Status* (*CastTypeInfoToMapTypeInfo)(const TypeInfo*, const MapTypeInfo** out);  // 103, <=1.14
  Status* (*CastTypeInfoToSequenceTypeInfo)(const TypeInfo*,                       // 104, <=1.14
                                            const SequenceTypeInfo** out);
  Status* (*GetMapKeyType)(const MapTypeInfo*, int* element_type);  // 105, <=1.14
  // The value / element type: a new TypeInfo that the caller releases.
  Status* (*GetMapValueType)(const MapTypeInfo*, TypeInfo** out);              // 106, <=1.14
  Status* (*GetSequenceElementType)(const SequenceTypeInfo*, TypeInfo** out);  // 107, <=1.14
  Status* (*ReleaseAvailableProviders)(char** list, int count);                // 126, <=1.14
  Status* (*SessionOptionsAppendExecutionProvider_TensorRT_V2)(                // 170, <=1.14
      SessionOptions*, const TensorRtProviderOptionsV2*);
  Status* (*CreateTensorRTProviderOptions)(TensorRtProviderOptionsV2** out);  // 171, <=1.14
  Status* (*UpdateTensorRTProviderOptions)(TensorRtProviderOptionsV2*,        // 172, <=1.14
                                           const char* const* keys, const char* const* values,
                                           size_t n);
  void (*ReleaseTensorRTProviderOptions)(TensorRtProviderOptionsV2*);  // 174, <=1.14
  Status* (*SessionOptionsAppendExecutionProvider_CUDA_V2)(            // 204, 1.11
      SessionOptions*, const CudaProviderOptionsV2*);
  Status* (*CreateCUDAProviderOptions)(CudaProviderOptionsV2** out);  // 205, 1.11
  Status* (*UpdateCUDAProviderOptions)(CudaProviderOptionsV2*,        // 206, 1.11
                                       const char* const* keys, const char* const* values,
                                       size_t n);
  void (*ReleaseCUDAProviderOptions)(CudaProviderOptionsV2*);  // 208, 1.11
  // The session takes these values for the named initializers whose data the model keeps
  // externally, instead of reading the model's external files; the values' buffers must outlive
  // the session.
  Status* (*AddExternalInitializers)(SessionOptions*, const char* const* names,  // 210, 1.12
                                     const Value* const* values, size_t count);
  // Any provider by name except CUDA and TensorRT, which ONNX Runtime rejects here.
  Status* (*SessionOptionsAppendExecutionProvider)(SessionOptions*,  // 216, 1.12
                                                   const char* provider_name,
                                                   const char* const* keys,
                                                   const char* const* values, size_t n);
  const char* (*GetBuildInfoString)();  // 254, 1.15
};

// Fills an Api from the table GetApi(kApiVersion) returned.
Api bind_api(const void* table);

// Turns a failed status into parity::Error("ONNX Runtime failed to <what>: <message>") after
// releasing it; does nothing for a null (successful) status.
void check(const Api& api, Status* status, std::string_view what);

}  // namespace parity::ort
