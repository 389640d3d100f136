// weft::Error -> weft.errors.<Code>Error (python/weft/errors.py), with the C++ message and `.code`.
#include "common.h"

namespace weft::python {

void InitErrors(py::module_& m) {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      // The classes live in Python so that they can also subclass the matching builtins.
      py::object cls;
      try {
        cls = py::module_::import("weft.errors").attr("error_class")(std::string(CodeName(e.code())));
      } catch (py::error_already_set&) {
        PyErr_SetString(PyExc_RuntimeError, e.what());
        return;
      }
      // A message may quote bytes from a file that are not UTF-8: escape them, never fail here.
      const std::string& msg = e.status().message();
      py::object text = py::reinterpret_steal<py::object>(
          PyUnicode_DecodeUTF8(msg.data(), static_cast<Py_ssize_t>(msg.size()), "backslashreplace"));
      if (!text) {
        PyErr_Clear();
        text = py::str("(the error message could not be decoded)");
      }
      py::object exc = cls(text, std::string(CodeName(e.code())));
      PyErr_SetObject(cls.ptr(), exc.ptr());
    }
  });
  m.def("_raise_error", [](const std::string& code, const std::string& message) {
    for (int c = static_cast<int>(Code::kCancelled); c <= static_cast<int>(Code::kUnauthenticated); ++c) {
      if (CodeName(static_cast<Code>(c)) == code) throw Error(Status(static_cast<Code>(c), message));
    }
    throw Error(errors::InvalidArgument("unknown error code '{}'", code));
  }, py::arg("code"), py::arg("message"), "Throws a C++ weft::Error (for tests of the error translation).");
}

}  // namespace weft::python
