// The parts of the extension module, one concept per file.
#pragma once

#include <nanobind/nanobind.h>

namespace moeval::python {

namespace nb = nanobind;

void bind_problem(nb::module_& m);    // Problem, Contract, matrix()
void bind_case(nb::module_& m);       // Case, its arrays and layouts, moe_align's reference
void bind_judge(nb::module_& m);      // Reference, Verdict, reference(), judge()
#ifdef MOEVAL_PY_CUDA
void bind_cuda(nb::module_& m);       // devices, guarded buffers, kernels, check()
#endif

}  // namespace moeval::python
