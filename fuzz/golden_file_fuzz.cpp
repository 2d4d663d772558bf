// Fuzz target: a golden family file. The contract under test: whatever the bytes, GoldenReader
// and read_all either succeed or throw one GoldenError (no crash, no other exception, no leak,
// no undefined behaviour), and a file that reads back diffs clean against itself.
#include <cstdint>
#include <cstdlib>

#include "fuzz_file.h"
#include "moeval/golden/diff.h"
#include "moeval/golden/errors.h"
#include "moeval/golden/golden_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto& path = moeval::fuzz::write_input(data, size);
  try {
    const moeval::golden::GoldenReader reader(path);
    const auto cases = reader.read_all();
    if (!moeval::golden::diff_cases(cases, cases).empty()) std::abort();  // a file must equal itself
  } catch (const moeval::golden::GoldenError&) {
    // the one documented failure
  }
  return 0;
}
