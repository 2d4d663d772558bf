// The weights the Marlin repack tests convert (gpu and multi_gpu binaries share them).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "moeval/fixtures/cases.h"
#include "moeval/fixtures/layouts/gptq.h"

namespace moeval::kernels::test {

enum class Order { plain, act_order, k_shard };

struct RepackCase {
  WeightType type;
  int group;
  Order order;
  int experts;
};

inline std::string case_name(const ::testing::TestParamInfo<RepackCase>& info) {
  const RepackCase& c = info.param;
  const char* order = c.order == Order::plain ? "plain" : c.order == Order::act_order ? "actorder" : "actorder_kshard1of4";
  return std::string(to_string(c.type)) + "_g" + (c.group < 0 ? std::string("ch") : std::to_string(c.group)) + "_" +
         order + "_E" + std::to_string(c.experts);
}

// K = 256 and N = 128 (two tiles both ways, four 64-column scale chunks); a K shard is rank 1 of 4
// with local K = 64 (less than a group of 128: uneven and empty groups on the rank).
inline QuantizedWeights weights_for(const RepackCase& c) {
  MoeProblem p;
  p.kind = ProblemKind::gemm2;
  p.experts = c.experts;
  p.tokens = 1;
  p.topk = 1;
  p.hidden = 128;  // N
  p.inter = 256;   // K
  p.scheme = QuantScheme{c.type, c.group, c.order != Order::plain, c.order != Order::k_shard, DType::bf16};
  p.seed = 77;
  if (c.order == Order::k_shard) {
    p.inter = 64;
    p.k_shards = 4;
    p.k_shard_rank = 1;
  }
  return build_gemm_case(p).w;
}

// The GPTQ qweight of the codes. A zero-point type is packed as its symmetric twin of the same
// width: qweight does not depend on the zero points (GPTQ v1 cannot store a zero point 0 anyway).
inline std::vector<std::uint32_t> gptq_qweight(QuantizedWeights w) {
  if (has_zero_point(w.scheme.type)) {
    w.scheme.type = bits_of(w.scheme.type) == 4 ? WeightType::uint4b8 : WeightType::uint8b128;
    w.zeros.clear();
  }
  return layouts::pack_gptq(w).qweight;
}

}  // namespace moeval::kernels::test
