// The parts of the extension module, one concept per file.
#pragma once

#include <nanobind/nanobind.h>

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

void bind_problem(nb::module_& m);    // Problem, Contract, matrix()
void bind_case(nb::module_& m);       // Case, its arrays and layouts, moe_align's reference
void bind_judge(nb::module_& m);      // Reference, Verdict, reference(), judge()
#ifdef MOEVAL_PY_CUDA
void bind_cuda(nb::module_& m);       // devices, guarded buffers, kernels, check()
#endif

}  // namespace moeval::python
