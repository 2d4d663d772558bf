// One dtype × bits instance set of the Marlin MoE GEMM (split so the builds run in parallel).
#include "marlin_dispatch.cuh"

namespace moeval::kernels::detail {
template void launch_marlin<__nv_bfloat16, 4>(const MarlinParams&, int, bool, cudaStream_t);
}  // namespace moeval::kernels::detail
