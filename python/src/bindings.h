// The parts of the extension module, one concept per file.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdio>
#include <new>
#include <string>

namespace moeval::python {

namespace nb = nanobind;

// `text` with each NUL character written as the two characters \0. nanobind makes a C++
// exception's what() the Python message, and what() is a C string: a name holding a NUL came out
// cut there (moeval.matrix("quick\0x") said only "matrix 'quick"). Only for names checked against
// a fixed set (dtypes, tiers, layouts, matrices, contract words): none holds a NUL or a backslash,
// so the escaped name is refused just as the raw one was, and the message now quotes all of it.
inline std::string nul_escaped(std::string text) {
  for (std::size_t i = text.find('\0'); i != std::string::npos; i = text.find('\0', i + 2)) text.replace(i, 1, "\\0");
  return text;
}

// Runs `build`; a std::bad_alloc becomes a MemoryError naming `who`, the problem and the size of
// its weights and output, where nanobind's own said only "std::bad_alloc". validate() bounds each
// array, not their sum, so a problem that passes can still need more memory than the machine has.
template <class Problem, class F>
auto naming_memory(const char* who, const Problem& problem, F&& build) -> decltype(build()) {
  try {
    return build();
  } catch (const std::bad_alloc&) {
    const auto shape = problem.gemm();
    const double weights = double(problem.local_experts()) * double(shape.k) * double(problem.k_shards) * double(shape.n);
    const double outputs = double(problem.tokens) * double(problem.topk) * double(shape.n);
    char sizes[160];
    std::snprintf(sizes, sizeof sizes, "its weights hold %.3g values, its output %.3g", weights, outputs);
    const std::string message = std::string(who) + ": not enough host memory for " + problem.name() + " (" + sizes +
                                "); try a smaller problem";
    PyErr_SetString(PyExc_MemoryError, message.c_str());
    throw nb::python_error();
  }
}

void bind_problem(nb::module_& m);    // Problem, Contract, matrix()
void bind_case(nb::module_& m);       // Case, its arrays and layouts, moe_align's reference
void bind_judge(nb::module_& m);      // Reference, Verdict, reference(), judge()
#ifdef MOEVAL_PY_CUDA
void bind_cuda(nb::module_& m);       // devices, guarded buffers, kernels, check()
#endif

}  // namespace moeval::python
