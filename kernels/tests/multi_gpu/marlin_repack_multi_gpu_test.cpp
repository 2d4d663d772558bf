// The Marlin repack and the cuda:1 bug class (two devices): buffers on device 1 while device 0 is
// current must be repacked on device 1 and leave device 0 current; buffers on two devices are refused.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "../device_vector.h"
#include "../marlin_repack_cases.h"
#include "moeval/fixtures/layouts/marlin.h"
#include "moeval/kernels/marlin_repack.h"
#include "moeval/testbed/devices.h"

namespace moeval::kernels::test {
namespace {

TEST(MarlinRepackDevices, BuffersOnDeviceOneWhileDeviceZeroIsCurrent) {
  MOEVAL_REQUIRE_GPUS(2);
  const QuantizedWeights w = weights_for({WeightType::uint4b8, 128, Order::act_order, 3});
  const layouts::MarlinWeights want = layouts::pack_marlin(w);
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  DeviceVector<std::uint32_t> qweight(gptq_qweight(w));
  DeviceVector<std::int32_t> perm(w.perm);
  DeviceVector<std::uint32_t> out(want.qweight.size());
  DeviceVector<std::uint16_t> scales(w.scales);
  DeviceVector<std::uint16_t> scales_out(want.scales.size());
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  GptqToMarlinArgs args;
  args.qweight = qweight.get();
  args.perm = perm.get();
  args.out = out.get();
  args.num_experts = int(w.experts);
  args.size_k = w.k;
  args.size_n = w.n;
  gptq_to_marlin(args);
  MarlinScalesArgs s;
  s.scales = scales.get();
  s.out = scales_out.get();
  s.num_experts = int(w.experts);
  s.num_groups = w.groups();
  s.size_n = w.n;
  marlin_permute_scales(s);
  int current = -1;
  ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
  EXPECT_EQ(current, 0);
  EXPECT_EQ(out.download(), want.qweight);
  EXPECT_EQ(scales_out.download(), want.scales);
}

// Buffers on two devices are refused, naming the one that differs.
TEST(MarlinRepackDevices, BuffersOnTwoDevicesAreRefused) {
  MOEVAL_REQUIRE_GPUS(2);
  DeviceVector<std::uint16_t> scales(64);
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  DeviceVector<std::uint16_t> out(64);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  MarlinScalesArgs s;
  s.scales = scales.get();
  s.out = out.get();
  s.num_experts = 1;
  s.num_groups = 1;
  s.size_n = 64;
  EXPECT_THROW(marlin_permute_scales(s), std::invalid_argument);
}

}  // namespace
}  // namespace moeval::kernels::test
