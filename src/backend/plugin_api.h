/* Parity's plugin interface: reference kernels for custom ops, and whole backends, in a shared
 * library.
 *
 * A plain C header (usable from C and C++) with no Parity type in it, so a plugin built once
 * keeps working with later builds of Parity that implement the same PARITY_PLUGIN_API_VERSION.
 * A plugin exports two functions:
 *
 *   PARITY_PLUGIN_DEFINE_VERSION()   // uint32_t parity_plugin_api_version(void)
 *   PARITY_PLUGIN_EXPORT int parity_register_ops(const ParityPluginApi* api) {
 *     ParityOpDef def = {0};
 *     def.domain = "my.domain";
 *     def.op_type = "MyOp";
 *     def.since_version = 1;
 *     def.run = my_op_run;
 *     return api->register_op(api->host, &def);
 *   }
 *
 * Parity calls parity_register_ops once, when the library is loaded (`parity run --plugins
 * libmyops.so`, parity::ref::load_plugin, parity.load_plugin in Python). For each node of a
 * registered op it calls prepare() once (read attributes, keep per-node state), then run() for
 * every inference, on the thread that runs the model. Tensors are dense, row-major, in the
 * element types of ONNX (TensorProto.DataType numbers); string tensors are not passed to
 * plugins. Functions return PARITY_OK (0) on success; on failure they report a message through
 * node_error / run_error and return anything else. See docs/plugins.md.
 *
 * A library may also (or instead) serve backends: runners that Parity compares like its own
 * (a TensorRT runner, say). It exports the backend entry point and its version function:
 *
 *   PARITY_BACKEND_DEFINE_VERSION()  // uint32_t parity_backend_api_version(void)
 *   PARITY_PLUGIN_EXPORT int parity_register_backends(const ParityBackendApi* api) {
 *     ParityBackendDef def = {0};
 *     def.name = "mybackend";        // `parity run --mybackend`, runner "mybackend-runner-N0-..."
 *     def.flag = "--mybackend";
 *     def.help = "Run inference with MyBackend";
 *     def.create = my_create;  def.infer = my_infer;  def.destroy = my_destroy;
 *     return api->register_backend(api->host, &def);
 *   }
 *
 * For each runner, Parity calls create() when it is activated, with the model serialized as
 * ONNX protobuf bytes (external data stays in model_dir) and the "key=value" strings given with
 * --<name>-option; infer() for every inference, on one thread at a time; destroy() when the
 * runner is deactivated. Outputs are handed back with set_output(), which copies them.
 */
#ifndef PARITY_PLUGIN_API_H_
#define PARITY_PLUGIN_API_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#define PARITY_PLUGIN_EXPORT extern "C" __attribute__((visibility("default")))
#else
#define PARITY_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* Raised whenever a structure or function below changes; a plugin built for another version
 * is refused when it is loaded. */
#define PARITY_PLUGIN_API_VERSION 1u

/* The two symbols a plugin exports. */
#define PARITY_PLUGIN_ENTRY_POINT "parity_register_ops"
#define PARITY_PLUGIN_VERSION_SYMBOL "parity_plugin_api_version"

/* Status codes. */
#define PARITY_OK 0
#define PARITY_ERROR 1
#define PARITY_ATTR_MISSING 2    /* the node has no attribute of that name */
#define PARITY_ATTR_WRONG_TYPE 3 /* the attribute exists with another type */

/* Element types (ONNX TensorProto.DataType). Any ONNX number except 8 (string) may be used. */
#define PARITY_DTYPE_FLOAT 1
#define PARITY_DTYPE_UINT8 2
#define PARITY_DTYPE_INT8 3
#define PARITY_DTYPE_UINT16 4
#define PARITY_DTYPE_INT16 5
#define PARITY_DTYPE_INT32 6
#define PARITY_DTYPE_INT64 7
#define PARITY_DTYPE_BOOL 9 /* one byte per element, 0 or 1 */
#define PARITY_DTYPE_FLOAT16 10
#define PARITY_DTYPE_DOUBLE 11
#define PARITY_DTYPE_UINT32 12
#define PARITY_DTYPE_UINT64 13
#define PARITY_DTYPE_BFLOAT16 16

/* A tensor handed to a kernel. An absent optional input has dtype 0 and data NULL. */
typedef struct ParityTensor {
  int32_t dtype;
  int32_t rank;
  const int64_t* shape; /* `rank` sizes */
  const void* data;     /* read-only: other nodes may share this buffer */
} ParityTensor;

typedef struct ParityNode ParityNode;             /* a node being prepared */
typedef struct ParityRunContext ParityRunContext; /* a node being run */

/* One op served by the plugin. Strings are copied by register_op. */
typedef struct ParityOpDef {
  const char* domain; /* "" (or "ai.onnx") for ONNX's default domain */
  const char* op_type;
  int64_t since_version; /* first opset of the domain served; 1 serves all from the start */
  int64_t until_version; /* last opset served, inclusive; 0 means no limit */
  void* user_data;       /* passed to prepare(); the kernel state when prepare is NULL */
  /* Called once per node before any run. Sets *kernel_state (passed to run and release).
   * May be NULL. */
  int (*prepare)(void* user_data, ParityNode* node, void** kernel_state);
  /* Computes the node's outputs, each allocated with allocate_output(). Required. */
  int (*run)(void* kernel_state, ParityRunContext* ctx, const ParityTensor* inputs,
             size_t num_inputs);
  /* Frees what prepare() made, when the model is released. May be NULL. */
  void (*release)(void* kernel_state);
} ParityOpDef;

/* What Parity offers a plugin. Valid for the life of the process. */
typedef struct ParityPluginApi {
  uint32_t version; /* PARITY_PLUGIN_API_VERSION of the running Parity */
  void* host;       /* the first argument of register_op */
  int (*register_op)(void* host, const ParityOpDef* def);

  /* While preparing a node. Strings and arrays stay valid until release(). */
  const char* (*node_name)(const ParityNode* node);
  size_t (*node_num_inputs)(const ParityNode* node);
  size_t (*node_num_outputs)(const ParityNode* node);
  int (*attr_int)(const ParityNode* node, const char* name, int64_t* value);
  int (*attr_float)(const ParityNode* node, const char* name, float* value);
  int (*attr_string)(const ParityNode* node, const char* name, const char** data, size_t* size);
  int (*attr_ints)(const ParityNode* node, const char* name, const int64_t** values, size_t* count);
  int (*attr_floats)(const ParityNode* node, const char* name, const float** values, size_t* count);
  void (*node_error)(ParityNode* node, const char* message);

  /* While running a node. allocate_output returns the zero-filled buffer of output `index`,
   * or NULL (with the reason recorded) when the dtype, shape or index is invalid. */
  size_t (*num_outputs)(const ParityRunContext* ctx);
  void* (*allocate_output)(ParityRunContext* ctx, size_t index, int32_t dtype, int32_t rank,
                           const int64_t* shape);
  void (*run_error)(ParityRunContext* ctx, const char* message);
} ParityPluginApi;

/* ---- Backends ---- */

/* Raised whenever a backend structure or function below changes; a library built for another
 * version is refused when it is loaded. Independent of PARITY_PLUGIN_API_VERSION. */
#define PARITY_BACKEND_API_VERSION 1u
#define PARITY_BACKEND_ENTRY_POINT "parity_register_backends"
#define PARITY_BACKEND_VERSION_SYMBOL "parity_backend_api_version"

typedef struct ParityBackendCall ParityBackendCall; /* one create() or infer() call */

typedef struct ParityNamedTensor {
  const char* name;
  ParityTensor tensor;
} ParityNamedTensor;

/* One backend served by the library. Strings are copied by register_backend. */
typedef struct ParityBackendDef {
  const char* name; /* letters, digits, '-' and '_' */
  const char* flag; /* the flag that adds a runner of it, "--" followed by letters, digits, '-' */
  const char* help; /* one line for --help */
  void* user_data;  /* passed to create() */
  /* Makes a runner's state (*runner) from the model. Required. */
  int (*create)(void* user_data, const void* model, size_t model_size, const char* model_dir,
                const char* const* options, size_t num_options, void** runner,
                ParityBackendCall* call);
  /* Runs one inference: every graph input by name; every graph output handed back with
   * set_output(). Required. */
  int (*infer)(void* runner, const ParityNamedTensor* inputs, size_t num_inputs,
               ParityBackendCall* call);
  /* Frees what create() made. May be NULL. */
  void (*destroy)(void* runner);
} ParityBackendDef;

/* What Parity offers a backend library. Valid for the life of the process. */
typedef struct ParityBackendApi {
  uint32_t version; /* PARITY_BACKEND_API_VERSION of the running Parity */
  void* host;       /* the first argument of register_backend */
  int (*register_backend)(void* host, const ParityBackendDef* def);
  /* During infer(): one output, copied by Parity. Returns PARITY_ERROR for an invalid dtype,
   * shape or name (with the reason recorded). */
  int (*set_output)(ParityBackendCall* call, const char* name, const ParityTensor* tensor);
  /* During create() or infer(): why the call failed. */
  void (*call_error)(ParityBackendCall* call, const char* message);
} ParityBackendApi;

typedef uint32_t (*ParityBackendVersionFn)(void);
typedef int (*ParityRegisterBackendsFn)(const ParityBackendApi* api);

#define PARITY_BACKEND_DEFINE_VERSION()                            \
  PARITY_PLUGIN_EXPORT uint32_t parity_backend_api_version(void) { \
    return PARITY_BACKEND_API_VERSION;                             \
  }

typedef uint32_t (*ParityPluginVersionFn)(void);
typedef int (*ParityRegisterOpsFn)(const ParityPluginApi* api);

/* Defines the version function with the version this plugin is compiled against. */
#define PARITY_PLUGIN_DEFINE_VERSION()                            \
  PARITY_PLUGIN_EXPORT uint32_t parity_plugin_api_version(void) { \
    return PARITY_PLUGIN_API_VERSION;                             \
  }

#ifdef __cplusplus
}
#endif

#endif /* PARITY_PLUGIN_API_H_ */
