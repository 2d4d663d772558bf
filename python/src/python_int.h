// An integer argument that says which field it was. nanobind's own int casters refuse a value they
// cannot take by failing the whole overload, with a TypeError ("incompatible function arguments
// ... Invoked with types: Problem, int") that names neither the field nor what is allowed. A
// PythonInt<T> parameter takes every int, every integer with __index__ (numpy's int64, uint64, ...),
// and also a bool or a float, only to refuse them by name: checked() raises a ValueError naming the
// field and the range for an int outside T's, and a TypeError naming the field for a bool (True is
// an int to Python, never a count here) or a float. Anything else (a string, None) still fails the
// overload as before.
#pragma once

#include <nanobind/nanobind.h>

#include <concepts>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

namespace moeval::python {

template <std::integral T>
struct PythonInt {
  enum class Kind { fits, out_of_range, not_an_integer };
  T value = 0;
  Kind kind = Kind::fits;
  std::string text;  // the value as Python writes it, where it does not fit
  std::string type;  // its type's name, where it is not an integer (bool, float, numpy.bool)
};

// The value; else "<who>: <field> = <value> is out of range; allowed <min> .. <max>" (ValueError),
// or "<who>: <field> = <value> is a <type>; an integer is needed" (TypeError).
template <std::integral T>
T checked(const char* who, const char* field, const PythonInt<T>& v) {
  using Kind = typename PythonInt<T>::Kind;
  if (v.kind == Kind::out_of_range) {
    throw std::invalid_argument(std::string(who) + ": " + field + " = " + v.text + " is out of range; allowed " +
                                std::to_string(std::numeric_limits<T>::min()) + " .. " +
                                std::to_string(std::numeric_limits<T>::max()));
  }
  if (v.kind == Kind::not_an_integer) {
    throw nanobind::type_error((std::string(who) + ": " + field + " = " + v.text + " is a " + v.type +
                                "; an integer is needed")
                                   .c_str());
  }
  return v.value;
}

}  // namespace moeval::python

namespace nanobind::detail {

template <std::integral T>
struct type_caster<moeval::python::PythonInt<T>> {
  using Kind = typename moeval::python::PythonInt<T>::Kind;
  NB_TYPE_CASTER(moeval::python::PythonInt<T>, const_name("int"))

  // `o` as Python writes it; for an int, in base 10 whatever its class's __str__ says.
  static std::string text_of(PyObject* o, bool integer) {
    PyObject* s = integer ? PyNumber_ToBase(o, 10) : PyObject_Repr(o);
    std::string text = "(a value Python cannot print)";
    if (s != nullptr) {
      Py_ssize_t n = 0;
      if (const char* c = PyUnicode_AsUTF8AndSize(s, &n)) text.assign(c, static_cast<std::size_t>(n));
      Py_DECREF(s);
    }
    PyErr_Clear();
    return text;
  }

  // numpy's bool scalar: an integer through __index__ on numpy 1.x (with a DeprecationWarning).
  static bool is_numpy_bool(PyObject* o) {
    const char* name = Py_TYPE(o)->tp_name;
    return std::strcmp(name, "numpy.bool_") == 0 || std::strcmp(name, "numpy.bool") == 0;
  }

  // The flags are not read: one parameter type for nanobind 2 (uint8_t) and 3 (uint32_t).
  bool from_python(handle src, std::uint32_t, cleanup_list*) noexcept {
    PyObject* o = src.ptr();
    value = {};
    if (PyBool_Check(o) || PyFloat_Check(o) || is_numpy_bool(o)) {
      value.kind = Kind::not_an_integer;
      value.text = text_of(o, false);
      value.type = PyBool_Check(o) ? "bool" : PyFloat_Check(o) ? "float" : Py_TYPE(o)->tp_name;
      return true;
    }
    object index;  // an integer of another type (numpy's int64, int32 ...) through its __index__
    if (!PyLong_Check(o)) {
      PyObject* i = PyNumber_Index(o);
      if (i == nullptr) {
        PyErr_Clear();
        return false;
      }
      index = steal(i);
      o = i;
    }
    bool fits = true;
    if constexpr (std::is_signed_v<T>) {
      int overflow = 0;
      const long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
      if (v == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return false;
      }
      fits = overflow == 0 && v >= std::numeric_limits<T>::min() && v <= std::numeric_limits<T>::max();
      if (fits) value.value = static_cast<T>(v);
    } else {
      // The sign first (an int below LLONG_MIN overflows to −1), then the magnitude.
      int overflow = 0;
      const long long as_signed = PyLong_AsLongLongAndOverflow(o, &overflow);
      if (as_signed == -1 && overflow == 0 && PyErr_Occurred()) {
        PyErr_Clear();
        return false;
      }
      unsigned long long v = 0;
      if (overflow < 0 || (overflow == 0 && as_signed < 0)) {
        fits = false;
      } else {
        v = PyLong_AsUnsignedLongLong(o);
        if (v == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
          PyErr_Clear();
          fits = false;
        }
      }
      fits = fits && v <= std::numeric_limits<T>::max();
      if (fits) value.value = static_cast<T>(v);
    }
    if (!fits) {
      value.kind = Kind::out_of_range;
      value.text = text_of(o, true);
    }
    return true;
  }

  static handle from_cpp(const moeval::python::PythonInt<T>& v, rv_policy, cleanup_list*) noexcept {
    if constexpr (std::is_signed_v<T>) {
      return PyLong_FromLongLong(v.value);
    } else {
      return PyLong_FromUnsignedLongLong(v.value);
    }
  }
};

}  // namespace nanobind::detail
