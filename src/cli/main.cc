// The `parity` command.
#include "cli/app.h"

int main(int argc, char** argv) { return parity::cli::main(argc, argv); }
