// An integer argument that accepts every Python int and says which field it was, where nanobind's
// own int casters refuse one outside the C++ type's range by failing the whole overload: its
// TypeError ("incompatible function arguments ... Invoked with types: Problem, int") names neither
// the field nor the range, although the value is an int. A PythonInt<T> parameter takes any int,
// or any integer with __index__ (numpy's), but not a bool (True is an int to Python, never a count
// here) or a float, and checked() turns one out of range into a ValueError naming the field and
// the range.
#pragma once

#include <nanobind/nanobind.h>

#include <concepts>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace moeval::python {

template <std::integral T>
struct PythonInt {
  T value = 0;
  bool in_range = true;
  std::string text;  // the value as Python writes it, where it is out of range
};

// The value, or std::invalid_argument (ValueError) "<who>: <field> = <value> is out of range; allowed
// <min> .. <max>".
template <std::integral T>
T checked(const char* who, const char* field, const PythonInt<T>& v) {
  if (!v.in_range) {
    throw std::invalid_argument(std::string(who) + ": " + field + " = " + v.text + " is out of range; allowed " +
                                std::to_string(std::numeric_limits<T>::min()) + " .. " +
                                std::to_string(std::numeric_limits<T>::max()));
  }
  return v.value;
}

}  // namespace moeval::python

namespace nanobind::detail {

template <std::integral T>
struct type_caster<moeval::python::PythonInt<T>> {
  NB_TYPE_CASTER(moeval::python::PythonInt<T>, const_name("int"))

  bool from_python(handle src, uint8_t, cleanup_list*) noexcept {
    PyObject* o = src.ptr();
    if (PyBool_Check(o) || PyFloat_Check(o)) return false;
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
    value = {};
    if constexpr (std::is_signed_v<T>) {
      int overflow = 0;
      const long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
      if (v == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return false;
      }
      value.in_range = overflow == 0 && v >= std::numeric_limits<T>::min() && v <= std::numeric_limits<T>::max();
      if (value.in_range) value.value = static_cast<T>(v);
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
        value.in_range = false;
      } else {
        v = PyLong_AsUnsignedLongLong(o);
        if (v == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
          PyErr_Clear();
          value.in_range = false;
        }
      }
      value.in_range = value.in_range && v <= std::numeric_limits<T>::max();
      if (value.in_range) value.value = static_cast<T>(v);
    }
    if (!value.in_range) {
      PyObject* s = PyObject_Str(o);
      if (s == nullptr) {
        PyErr_Clear();
        value.text = "(an int)";
      } else {
        Py_ssize_t n = 0;
        const char* c = PyUnicode_AsUTF8AndSize(s, &n);
        value.text = c != nullptr ? std::string(c, static_cast<std::size_t>(n)) : "(an int)";
        if (c == nullptr) PyErr_Clear();
        Py_DECREF(s);
      }
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
