// .npz archives: the zip directory (ZIP64 included), stored and deflated members, CRCs.
#include "core/error.h"
#include "fuzz/fuzz_util.h"
#include "io/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static bool ready = (parity::fuzz::use_small_limits(), true);
  (void)ready;
  try {
    parity::io::npz_decode(parity::fuzz::bytes_of(data, size));
  } catch (const parity::Error&) {
  }
  return 0;
}
