// The `parity` command.
#include "cli/app.h"
#include "core/interrupt.h"

int main(int argc, char** argv) {
  parity::install_interrupt_handlers();  // Ctrl-C: a message, exit 130, no partial files
  return parity::cli::main(argc, argv);
}
