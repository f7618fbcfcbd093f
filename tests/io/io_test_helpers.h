// Helpers shared by the io tests: running a Python script that sees the test folder as `D`.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "support/test_util.h"

namespace parity::testing {

// Runs `body` with Debian's Python after `D = '<dir>'` and the usual imports; the test fails
// (and returns false) unless the script exits with status 0.
inline ::testing::AssertionResult python_in(const TempDir& dir, const std::string& body) {
  std::string script = "import base64, io, json, sys\nimport numpy as np\nD = '" +
                       dir.path().string() + "'\n" + body;
  CommandResult r = run_python(script);
  if (r.exit_code != 0)
    return ::testing::AssertionFailure() << "python failed (" << r.exit_code << "):\n" << r.output;
  return ::testing::AssertionSuccess();
}

}  // namespace parity::testing
