// marlin_wgmma_k_loop_rate: the checks, the device, and the dispatch to the timed sm_90a kernel.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <stdexcept>
#include <string>

#include "marlin_params.h"
#include "marlin_wgmma_rate_launch.h"
#include "wgmma_support.h"
#include "moeval/kernels/device_info.h"
#include "moeval/kernels/marlin_wgmma_rate.h"

namespace moeval::kernels {

std::string marlin_wgmma_k_loop_unavailable(int device) { return detail::wgmma_unavailable_on(device); }

double marlin_wgmma_k_loop_rate(const MarlinWgmmaRateArgs& args) {
  auto reject = [](const std::string& what) { throw std::invalid_argument("marlin_wgmma_k_loop_rate: " + what); };
  if (!detail::is_wgmma_item_height(args.rows)) {
    reject("rows = " + std::to_string(args.rows) + "; allowed 16, 32, 64 or 128");
  }
  if (args.k_tiles < 16 || args.k_tiles > (1 << 20) || args.k_tiles % 16 != 0) {
    reject("k_tiles = " + std::to_string(args.k_tiles) + "; allowed 16 to 2^20, a multiple of 16");
  }
  if (args.repeats < 1 || args.repeats > 1000) reject("repeats = " + std::to_string(args.repeats) + "; allowed 1 to 1000");
  if (args.device < 0) reject("device = " + std::to_string(args.device) + "; must be ≥ 0");
  int count = 0;
  check_cuda(cudaGetDeviceCount(&count), "marlin_wgmma_k_loop_rate: cudaGetDeviceCount");
  if (args.device >= count) {
    reject("device = " + std::to_string(args.device) + " but " + std::to_string(count) + " CUDA devices are visible");
  }
  if (const std::string why = marlin_wgmma_k_loop_unavailable(args.device); !why.empty()) {
    throw std::runtime_error("marlin_wgmma_k_loop_rate: " + why);
  }
#if defined(MOEVAL_HAVE_WGMMA)
  DeviceGuard guard(args.device);
  const bool four = marlin_bits(args.type) == 4;
  const detail::KLoopTiming t =
      args.dtype == ActDType::f16
          ? (four ? detail::time_marlin_wgmma_k_loop<__half, 4>(args.rows, args.k_tiles, args.repeats)
                  : detail::time_marlin_wgmma_k_loop<__half, 8>(args.rows, args.k_tiles, args.repeats))
          : (four ? detail::time_marlin_wgmma_k_loop<__nv_bfloat16, 4>(args.rows, args.k_tiles, args.repeats)
                  : detail::time_marlin_wgmma_k_loop<__nv_bfloat16, 8>(args.rows, args.k_tiles, args.repeats));
  return t.flops / t.seconds;
#else
  return 0;  // unreachable: marlin_wgmma_k_loop_unavailable names the missing sm_90a code
#endif
}

}  // namespace moeval::kernels
