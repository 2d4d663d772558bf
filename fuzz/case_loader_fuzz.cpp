// Fuzz target: a reproduce file (`moeval check --repro FILE`) and the loader kernels use for golden
// cases. Each case is decoded into fixtures types (problem validated, shapes, dtypes, code ranges,
// routing ids, finite inputs, permutations checked). Contract: success or one GoldenError.
#include <cstdint>

#include "fuzz_file.h"
#include "moeval/golden/errors.h"
#include "moeval/golden/golden_file.h"
#include "moeval/golden/loader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto& path = moeval::fuzz::write_input(data, size);
  try {
    const moeval::golden::GoldenReader reader(path);
    for (const std::string& name : reader.case_names()) {
      const moeval::golden::CaseRecord record = reader.read_case(name);
      try {
        if (moeval::golden::decode_problem(record, path).kind == moeval::ProblemKind::layer) {
          (void)moeval::golden::decode_layer_case(record, path);
        } else {
          (void)moeval::golden::decode_gemm_case(record, path);
        }
      } catch (const moeval::golden::GoldenError&) {
        // next case: one bad case must not hide crashes in the others
      }
    }
  } catch (const moeval::golden::GoldenError&) {
  }
  return 0;
}
