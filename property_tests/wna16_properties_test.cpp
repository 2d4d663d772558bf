// The catalogue of GEMM properties (gemm_properties.h) on our WNA16 kernel. Its generator already
// reaches only shapes the kernel supports, except act-order, which the kernel refuses (discarded).
#include "gemm_properties.h"
#include "moeval/testbed/wna16_kernel.h"

namespace moeval {
namespace {

properties::PropertyKernel wna16() { return {testbed::make_wna16_kernel()}; }

MOEVAL_GPU_PROPERTY(Wna16Properties, wna16, KernelMatchesReferenceDeterministicallyWithIntactCanaries)
MOEVAL_GPU_PROPERTY(Wna16Properties, wna16, ZeroRoutingWeightGivesZeroRows)
MOEVAL_GPU_PROPERTY(Wna16Properties, wna16, PermutingTokensPermutesOutputRows)
MOEVAL_GPU_PROPERTY(Wna16Properties, wna16, RelabellingExpertsLeavesOutputUnchanged)
MOEVAL_GPU_PROPERTY(Wna16Properties, wna16, RemoteExpertRowsAreZero)

}  // namespace
}  // namespace moeval
