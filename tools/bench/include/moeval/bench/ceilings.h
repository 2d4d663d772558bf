// The two ceilings of the roofline, measured in the same run as the kernels (METHOD.md): device
// copy bandwidth (cudaMemcpy device→device, bytes read + written) and the dense bf16 matrix rate
// (a large cublasGemmEx, bf16 in, fp32 compute) on random data.
#pragma once

namespace moeval::bench {

struct Ceilings {
  double copy_bytes_per_s = 0;    // HBM bandwidth
  double dense_flops_per_s = 0;   // bf16 tensor-core rate
};

// Medians over `repeats` timed runs after warm-up, on the current device.
Ceilings measure_ceilings(int repeats);

}  // namespace moeval::bench
