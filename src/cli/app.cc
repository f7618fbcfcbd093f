#include "cli/app.h"

#include <cstdio>

namespace parity::cli {

int main(int argc, char** argv) {
  std::fprintf(stderr, "usage: parity {run,inspect} ...\n");
  return 2;
}

}  // namespace parity::cli
