// The wgmma instances of the Marlin MoE GEMM for one activation dtype (built for sm_90a only; see
// kernels/CMakeLists.txt).
#include "../marlin_wgmma_dispatch.cuh"

namespace moeval::kernels::detail {
template void launch_marlin_wgmma<__half, 4>(const MarlinParams&, int, int, cudaStream_t);
template void launch_marlin_wgmma<__half, 8>(const MarlinParams&, int, int, cudaStream_t);
}  // namespace moeval::kernels::detail
