// A stored case that does not describe a valid, consistent problem is refused with a GoldenError
// naming the file, the case and the attribute or dataset — never loaded half-right.
#include <gtest/gtest.h>

#include "moeval/golden/case_codec.h"
#include "moeval/golden/errors.h"
#include "moeval/golden/generate.h"

namespace moeval::golden {
namespace {

MoeProblem small_gemm() {
  MoeProblem p;
  p.kind = ProblemKind::gemm1;
  p.experts = 4;
  p.tokens = 3;
  p.topk = 2;
  p.hidden = 64;
  p.inter = 16;
  p.scheme = {WeightType::uint4, 32, false, true, DType::f16};
  p.seed = 9;
  return p;
}

std::string decode_error(const CaseRecord& r) {
  try {
    decode_gemm_case(r, "stored.h5");
  } catch (const GoldenError& e) {
    return e.what();
  }
  ADD_FAILURE() << "decoded without error";
  return "";
}

void expect_contains(const std::string& message, const std::string& part) {
  EXPECT_NE(message.find(part), std::string::npos) << "message: " << message << "\nexpected to contain: " << part;
}

class GoldenCodecErrors : public ::testing::Test {
 protected:
  CaseRecord record = generate_case(Family::wna16, small_gemm());
  std::string prefix = "golden file 'stored.h5', case '" + small_gemm().name() + "', ";
};

TEST_F(GoldenCodecErrors, TheUntouchedRecordDecodes) { EXPECT_NO_THROW(decode_gemm_case(record, "stored.h5")); }

TEST_F(GoldenCodecErrors, MissingAttributeIsNamed) {
  record.attributes.erase("experts");
  expect_contains(decode_error(record), prefix + "attribute experts: is missing");
}

TEST_F(GoldenCodecErrors, MistypedAttributeIsNamed) {
  record.attributes["topk"] = std::string("two");
  expect_contains(decode_error(record), prefix + "attribute topk: must be an integer");
}

TEST_F(GoldenCodecErrors, UnknownEnumNameListsTheAllowedOnes) {
  record.attributes["weight_type"] = std::string("uint3");
  expect_contains(decode_error(record), prefix +
                                            "attribute weight_type: 'uint3' is unknown; allowed: uint4b8, uint4, "
                                            "uint8b128, uint8");
}

TEST_F(GoldenCodecErrors, InvalidProblemIsRefusedWithTheFixturesReason) {
  record.attributes["group_size"] = std::int64_t(48);
  expect_contains(decode_error(record), prefix + "problem: is not a valid problem: group_size = 48");
}

TEST_F(GoldenCodecErrors, NameThatDoesNotMatchTheAttributesIsRefused) {
  record.attributes["seed"] = std::int64_t(10);
  expect_contains(decode_error(record), prefix + "attribute problem_name:");
}

TEST_F(GoldenCodecErrors, WrongShapeTypeAndDtypeAreNamed) {
  CaseRecord shape = record;
  shape.datasets.at("inputs/a").array.shape = {1, 192};
  expect_contains(decode_error(shape), prefix + "dataset inputs/a: has shape [1, 192], expected [3, 64]");
  CaseRecord type = record;
  type.datasets.at("weights/codes").array =
      make_array<std::int32_t>({4, 64, 32}, std::vector<std::int32_t>(4 * 64 * 32));
  expect_contains(decode_error(type), prefix + "dataset weights/codes: holds int32, expected uint8");
  CaseRecord dtype = record;
  dtype.datasets.at("weights/scales").array.float16 = DType::bf16;
  expect_contains(decode_error(dtype), prefix + "dataset weights/scales: has dtype bf16, expected fp16");
}

// The GEMM a case rebuilds follows from its kind: GEMM1 reads A row slot / topk and never multiplies
// by the routing weights, GEMM2 reads row slot and always does. (Before 2026-12-05 any divisor >= 1
// and either flag loaded, and rebuilt another GEMM than the stored outputs were computed for.)
TEST_F(GoldenCodecErrors, RowDivisorAndWeightFlagMustFitTheKind) {
  CaseRecord divisor = record;
  divisor.attributes["a_row_divisor"] = std::int64_t(1);
  expect_contains(decode_error(divisor), prefix + "attribute a_row_divisor: is 1; a gemm1 case with topk 2 needs 2");
  CaseRecord weights = record;
  weights.attributes["mul_topk_weights"] = std::int64_t(1);
  expect_contains(decode_error(weights), prefix + "attribute mul_topk_weights: is true; a gemm1 case never multiplies");
  MoeProblem p2 = small_gemm();
  p2.kind = ProblemKind::gemm2;
  p2.inter = 64;  // GEMM2's K: a multiple of the group size
  CaseRecord gemm2 = generate_case(Family::wna16, p2);
  EXPECT_NO_THROW(decode_gemm_case(gemm2, "stored.h5"));
  gemm2.attributes["a_row_divisor"] = std::int64_t(2);
  expect_contains(decode_error(gemm2), "attribute a_row_divisor: is 2; a gemm2 case with topk 2 needs 1");
}

TEST_F(GoldenCodecErrors, MissingDatasetIsNamed) {
  record.datasets.erase("weights/zeros");
  expect_contains(decode_error(record), prefix + "dataset weights/zeros: is missing");
}

TEST_F(GoldenCodecErrors, ExpertIdOutsideTheRangeIsNamed) {
  std::get<std::vector<std::int32_t>>(record.datasets.at("routing/topk_ids").array.data)[4] = 4;
  expect_contains(decode_error(record), prefix + "dataset routing/topk_ids: element 4 = 4 is outside [0, E = 4)");
}

TEST_F(GoldenCodecErrors, CodeOrZeroPointOutsideTheTypeIsRefused) {
  CaseRecord zero = record;
  std::get<std::vector<std::uint8_t>>(zero.datasets.at("weights/zeros").array.data)[0] = 16;
  expect_contains(decode_error(zero), prefix + "datasets weights/*: are not valid quantized weights");
  CaseRecord code = record;
  std::get<std::vector<std::uint8_t>>(code.datasets.at("weights/codes").array.data)[7] = 200;
  expect_contains(decode_error(code), prefix + "datasets weights/*: are not valid quantized weights");
}

TEST_F(GoldenCodecErrors, PermThatIsNotAPermutationIsNamed) {
  MoeProblem p = small_gemm();
  p.scheme = {WeightType::uint4b8, 32, true, true, DType::bf16};
  CaseRecord act_order = generate_case(Family::marlin, p);
  EXPECT_NO_THROW(decode_gemm_case(act_order, "stored.h5"));
  auto& perm = std::get<std::vector<std::int32_t>>(act_order.datasets.at("weights/perm").array.data);
  perm[64 + 1] = perm[64];  // expert 1 lists one row twice
  const std::string prefix_ao = "golden file 'stored.h5', case '" + p.name() + "', ";
  expect_contains(decode_error(act_order),
                  prefix_ao + "dataset weights/perm: expert 1 is not a permutation of 0..K-1 (entry 1");
}

TEST_F(GoldenCodecErrors, LayerCaseIsNotAGemmCase) {
  MoeProblem p = small_gemm();
  p.kind = ProblemKind::layer;
  p.inter = 32;
  const CaseRecord layer = generate_case(Family::layer, p);
  EXPECT_THROW(decode_gemm_case(layer, "stored.h5"), GoldenError);
  EXPECT_NO_THROW(decode_layer_case(layer, "stored.h5"));
  EXPECT_THROW(decode_layer_case(record, "stored.h5"), GoldenError);
}

}  // namespace
}  // namespace moeval::golden
