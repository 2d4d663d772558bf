// Internal: shared-memory barriers with arrival counts and transaction bytes (mbarrier, sm_90), the
// bulk copy that completes on one, a reducing barrier of part of the block, and the register
// reallocation between warpgroups (setmaxnreg, sm_90a) — what a thread block of producer and
// consumer warpgroups synchronizes with.
//
// An mbarrier is a 64-bit word in shared memory: a phase completes once the expected arrivals have
// arrived and the transaction bytes announced for it (expect_tx) have landed; then the next phase
// begins with the same expected count. A waiter names the phase by its parity: wait(parity)
// returns once the phase of that parity has completed, i.e. at once on a fresh barrier for parity
// 1 (the phase "before" phase 0), which is how a ring of free buffers starts out free.
#pragma once

#include <cstdint>

#include "async_copy.cuh"

namespace moeval::kernels::detail {

// Sets the expected arrivals of `bar`'s phases. Then fence_mbarrier_init and a barrier of the block,
// before any thread or copy arrives on it.
__device__ inline void mbarrier_init(std::uint64_t* bar, unsigned arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" : : "r"(shared_address(bar)), "r"(arrivals) : "memory");
}
// Makes the initialized barriers visible to the async proxy (the bulk copies' completions).
__device__ inline void fence_mbarrier_init() { asm volatile("fence.mbarrier_init.release.cluster;\n" : : : "memory"); }

// One arrival (release: this thread's earlier shared-memory accesses happen before the phase completes).
__device__ inline void mbarrier_arrive(std::uint64_t* bar) {
  asm volatile("{\n.reg .b64 state;\nmbarrier.arrive.shared::cta.b64 state, [%0];\n}\n" : : "r"(shared_address(bar)) : "memory");
}
// One arrival that also announces `bytes` more transaction bytes for the current phase (bulk copies
// issued after it by this thread complete them).
__device__ inline void mbarrier_arrive_expect_tx(std::uint64_t* bar, unsigned bytes) {
  asm volatile("{\n.reg .b64 state;\nmbarrier.arrive.expect_tx.shared::cta.b64 state, [%0], %1;\n}\n"
               :
               : "r"(shared_address(bar)), "r"(bytes)
               : "memory");
}
// An arrival made by the hardware once every cp.async this thread issued before it has landed; the
// thread goes on at once. noinc: it counts against the expected arrivals (init counts these threads).
__device__ inline void cp_async_mbarrier_arrive(std::uint64_t* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" : : "r"(shared_address(bar)) : "memory");
}
// Waits (acquire) until the phase of `parity` of `bar` has completed. try_wait suspends the thread
// for a while in hardware before it reports failure, so the loop does not spin on shared memory.
__device__ inline void mbarrier_wait(std::uint64_t* bar, unsigned parity) {
  asm volatile(
      "{\n.reg .pred done;\nwait_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait_%=;\n}\n"
      :
      : "r"(shared_address(bar)), "r"(parity)
      : "memory");
}

// Whether the phase of `parity` of `bar` has completed, at once (acquire where true): a waiter that
// asks ahead of time, while it still has work, and calls mbarrier_wait later only where it had not.
__device__ inline bool mbarrier_test(std::uint64_t* bar, unsigned parity) {
  std::uint32_t done = 0;
  asm volatile(
      "{\n.reg .pred p;\nmbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(done)
      : "r"(shared_address(bar)), "r"(parity)
      : "memory");
  return done != 0;
}

// `bytes` (a multiple of 16, both addresses 16-byte aligned) from global to shared memory by the bulk
// copy engine, completing as transaction bytes on `bar` (announced before by mbarrier_arrive_expect_tx).
__device__ inline void bulk_copy_to_shared(void* dst, const void* src, unsigned bytes, std::uint64_t* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
               :
               : "r"(shared_address(dst)), "l"(src), "r"(bytes), "r"(shared_address(bar))
               : "memory");
}

// True in every calling thread iff `value` is true in all THREADS threads that call it with barrier
// `id` (1..15; 0 is __syncthreads's): a barrier of part of the block (one warpgroup, say) that also
// reduces. THREADS: a multiple of 32; whole warps call it.
template <int THREADS>
__device__ inline bool barrier_and(int id, bool value) {
  std::uint32_t all;
  asm volatile(
      "{\n.reg .pred p, q;\nsetp.ne.u32 p, %1, 0;\nbarrier.cta.red.and.pred q, %2, %3, p;\nselp.u32 %0, 1, 0, q;\n}\n"
      : "=r"(all)
      : "r"(static_cast<std::uint32_t>(value)), "r"(id), "n"(THREADS)
      : "memory");
  return all != 0;
}

// Lowers (dec) or raises (inc) the registers per thread of the calling warpgroup to REGS (a
// multiple of 8 in 24..256); every warp of the warpgroup executes it. Takes effect only in kernels
// with a register cap at entry (__launch_bounds__ with a minimum of blocks per SM).
template <int REGS>
__device__ inline void release_registers() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" : : "n"(REGS));
}
template <int REGS>
__device__ inline void claim_registers() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" : : "n"(REGS));
}

}  // namespace moeval::kernels::detail
