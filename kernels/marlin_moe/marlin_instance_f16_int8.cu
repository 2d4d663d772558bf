// One dtype × bits instance set of the Marlin MoE GEMM (split so the builds run in parallel).
#include "marlin_dispatch.cuh"

namespace moeval::kernels::detail {
template void launch_marlin<__half, 8>(const MarlinParams&, int, bool, cudaStream_t);
}  // namespace moeval::kernels::detail
