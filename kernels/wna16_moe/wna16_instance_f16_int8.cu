// One dtype × bit-width of the WNA16 MoE GEMM per file, so the instances compile in parallel.
#include "wna16_kernel.cuh"

namespace moeval::kernels::detail {
template void launch_wna16<__half, 8>(const Wna16Params&, int, cudaStream_t);
}  // namespace moeval::kernels::detail
