// moeval._moeval: the extension behind the Python package `moeval` (python/moeval/__init__.py).
// InvalidProblem and the references' std::invalid_argument become ValueError (nanobind's default
// translation of std::invalid_argument), with moeval's message: what, where, what is allowed.
#include "bindings.h"

NB_MODULE(_moeval, m) {
  m.doc() = "moeval: quantized MoE kernels checked against exact references";
  moeval::python::bind_problem(m);
  moeval::python::bind_case(m);
  moeval::python::bind_judge(m);
#ifdef MOEVAL_PY_CUDA
  moeval::python::bind_cuda(m);
  m.attr("has_cuda") = true;
#else
  m.attr("has_cuda") = false;
#endif
}
