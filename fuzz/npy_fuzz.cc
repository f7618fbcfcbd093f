// .npy decoding (headers of versions 1 to 3, every dtype, object arrays refused).
#include "core/error.h"
#include "fuzz/fuzz_util.h"
#include "io/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static bool ready = (parity::fuzz::use_small_limits(), true);
  (void)ready;
  try {
    parity::Tensor t = parity::io::npy_decode(parity::fuzz::bytes_of(data, size));
    parity::io::npy_encode(t);  // whatever decodes must encode again
  } catch (const parity::Error&) {
  }
  return 0;
}
