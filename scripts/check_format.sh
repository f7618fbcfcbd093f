#!/usr/bin/env bash
# Checks that every C++ file of the repository follows .clang-format (the test `clang_format`).
# Prints the files that do not, with the command that fixes them, and exits 1 if there is any.
set -uo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cc' '*.h' 2>/dev/null || find src tests bench python fuzz examples -name '*.cc' -o -name '*.h')
bad=()
for f in "${files[@]}"; do
  [ -f "$f" ] || continue
  clang-format --style=file --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  printf '%s\n' "${bad[@]}"
  echo "clang_format: ${#bad[@]} of ${#files[@]} files do not follow .clang-format; fix with: clang-format -i --style=file <file>"
  exit 1
fi
echo "clang_format: ${#files[@]} files follow .clang-format"
