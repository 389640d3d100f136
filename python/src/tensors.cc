// dtypes and numpy arrays <-> Tensors (zero-copy both ways where dtype, layout and alignment allow).
#include <cstring>

#include "common.h"

namespace weft::python {

py::dtype NumpyDType(DType dt) {
  switch (dt) {
    case DType::kFloat32: return py::dtype::of<float>();
    case DType::kFloat64: return py::dtype::of<double>();
    case DType::kInt32: return py::dtype::of<int32_t>();
    case DType::kInt64: return py::dtype::of<int64_t>();
    case DType::kUInt8: return py::dtype::of<uint8_t>();
    case DType::kBool: return py::dtype::of<bool>();
    case DType::kFloat16: return py::dtype(23);  // NPY_HALF
    default: break;
  }
  throw Error(errors::Unimplemented("dtype {} has no numpy equivalent", DTypeName(dt)));
}

DType FromNumpyDType(const py::dtype& dt) {
  const char kind = dt.kind();
  const py::ssize_t size = dt.itemsize();
  WEFT_REQUIRE(dt.byteorder() != '>', "numpy dtype {} is big-endian: convert it with .astype(its native form) first",
               std::string(py::str(py::handle(dt))));
  if (kind == 'f' && size == 4) return DType::kFloat32;
  if (kind == 'f' && size == 8) return DType::kFloat64;
  if (kind == 'f' && size == 2) return DType::kFloat16;
  if (kind == 'i' && size == 4) return DType::kInt32;
  if (kind == 'i' && size == 8) return DType::kInt64;
  if (kind == 'u' && size == 1) return DType::kUInt8;
  if (kind == 'b' && size == 1) return DType::kBool;
  throw Error(errors::InvalidArgument(
      "numpy dtype {} has no weft dtype (weft has float32, float64, int32, int64, uint8, bool, float16)",
      std::string(py::str(py::handle(dt)))));
}

DType ToDType(const py::handle& h) {
  if (py::isinstance<DType>(h)) return h.cast<DType>();
  if (py::isinstance<py::str>(h)) {
    const std::string s = h.cast<std::string>();
    if (s == "float") return DType::kFloat32;  // as TF reads "float"
    if (s == "double") return DType::kFloat64;
    if (s == "int") return DType::kInt32;
    return ParseDType(s);
  }
  if (h.is(py::type::of(py::bool_()))) return DType::kBool;
  if (h.is(py::type::of(py::float_()))) return DType::kFloat32;
  if (h.is(py::type::of(py::int_()))) return DType::kInt32;
  try {
    return FromNumpyDType(py::dtype::from_args(py::reinterpret_borrow<py::object>(h)));
  } catch (py::error_already_set&) {
    throw Error(errors::InvalidArgument("not a dtype: {}", std::string(py::repr(h))));
  }
}

py::array TensorToNumpy(const Tensor& t) {
  WEFT_REQUIRE(t.IsInitialized(), "cannot convert an uninitialized tensor to numpy");
  // A GPU variable's value (get_weights) is device memory: numpy gets a host copy (shared: nobody
  // else holds it).
  if (t.memory_kind() == MemoryKind::kDevice) return TensorToNumpy(t.ToHost());
  const py::dtype dt = NumpyDType(t.dtype());
  std::vector<py::ssize_t> shape;
  for (int i = 0; i < t.rank(); ++i) shape.push_back(t.dim(i));
  const std::shared_ptr<Buffer>& buf = t.buffer();
  // Shared only when nobody else holds the buffer: a variable's storage, a constant or a fed
  // array would otherwise change under the caller (or the caller could change them). Memory
  // weft did not allocate (a fed numpy array passed through) is copied too.
  if (t.num_elements() > 0 && buf && buf.use_count() == 1 && buf->allocator() != nullptr) {
    auto* keep = new std::shared_ptr<Buffer>(buf);
    py::capsule base(keep, [](void* p) { delete static_cast<std::shared_ptr<Buffer>*>(p); });
    return py::array(dt, shape, {}, t.raw_data(), base);
  }
  py::array out(dt, shape);
  if (t.bytes() > 0) std::memcpy(out.mutable_data(), t.raw_data(), t.bytes());
  return out;
}

namespace {

// "2147483648" for a numpy scalar or Python number (repr of a Python int, numpy's str otherwise).
std::string ValueText(const py::handle& v) { return std::string(py::str(v)); }

// The (inclusive) range of an integer dtype as Python ints.
std::pair<py::int_, py::int_> IntRange(DType dt) {
  switch (dt) {
    case DType::kInt32: return {py::int_(INT32_MIN), py::int_(INT32_MAX)};
    case DType::kInt64: return {py::int_(INT64_MIN), py::int_(INT64_MAX)};
    case DType::kUInt8: return {py::int_(0), py::int_(255)};
    default: break;
  }
  throw Error(errors::Internal("IntRange of {}", DTypeName(dt)));
}

// InvalidArgument unless every element of `src` (integer, bool or float kind) is a value of the
// integer dtype `dt`. `python_value`: src came from Python numbers, whose fractions TF rejects.
void CheckIntegerRange(const py::array& src, DType dt, bool python_value) {
  if (src.size() == 0) return;
  const py::module_ np = py::module_::import("numpy");
  const char kind = src.dtype().kind();
  const std::string_view name = DTypeName(dt);
  if (kind == 'f') {
    const py::object finite = np.attr("isfinite")(src);
    if (!finite.attr("all")().cast<bool>()) {
      const py::object at = np.attr("argmin")(finite);
      throw Error(errors::InvalidArgument("value {} (flat index {}) cannot be converted to {}",
                                          ValueText(py::object(src.attr("ravel")()[at])), ValueText(at), name));
    }
    if (python_value) {
      const py::object whole = np.attr("equal")(src, np.attr("trunc")(src));
      if (!whole.attr("all")().cast<bool>()) {
        const py::object at = np.attr("argmin")(whole);
        throw Error(errors::InvalidArgument("value {} (flat index {}) is not an integer: it cannot be {}",
                                            ValueText(py::object(src.attr("ravel")()[at])), ValueText(at), name));
      }
    }
  } else if (kind != 'i' && kind != 'u' && kind != 'b') {
    return;  // strings and the like: numpy's astype reports them
  } else if (np.attr("can_cast")(src.dtype(), NumpyDType(dt), py::arg("casting") = "safe").cast<bool>()) {
    return;  // every value of the source's integer type fits (int32 into int64, same dtype): no scan
  }
  const auto [lo, hi] = IntRange(dt);
  for (const char* which : {"argmin", "argmax"}) {
    const py::object at = np.attr(which)(src);
    const py::object v = src.attr("ravel")()[at];
    // Compared as Python numbers: exact for every int64 and uint64 value.
    const py::object as_number = kind == 'f' ? py::object(py::float_(v)) : py::object(py::int_(v));
    if (as_number < lo || as_number > hi) {
      throw Error(errors::InvalidArgument("value {} (flat index {}) is out of range for {} [{}, {}]", ValueText(v),
                                          ValueText(at), name, ValueText(lo), ValueText(hi)));
    }
  }
}

}  // namespace

py::array CheckedArray(const py::handle& value, std::optional<DType> dtype) {
  const py::module_ np = py::module_::import("numpy");
  const py::object generic = np.attr("generic");
  const bool python_value = !py::isinstance<py::array>(value) && !py::isinstance(value, generic);
  py::array src;
  try {
    src = np.attr("asarray")(value);
  } catch (py::error_already_set& e) {
    if (!e.matches(PyExc_OverflowError)) throw;
    throw Error(errors::InvalidArgument("value {} is out of range for int64 (numpy: {})",
                                        ValueText(value), e.what()));
  }
  if (src.dtype().kind() == 'O' && python_value) {
    // A Python int beyond 64 bits (numpy keeps it as an object); other objects are numpy's to judge.
    for (const py::handle& v : src.attr("ravel")()) {
      if (py::isinstance<py::int_>(v) && !py::isinstance<py::bool_>(v)) {
        throw Error(errors::InvalidArgument("value {} is out of range for {}", ValueText(v),
                                            dtype ? DTypeName(*dtype) : std::string_view("int64")));
      }
    }
  }
  if (!dtype) return src;
  if (IsInteger(*dtype)) CheckIntegerRange(src, *dtype, python_value);
  return src.attr("astype")(NumpyDType(*dtype), py::arg("copy") = false);
}

Tensor NumpyToTensor(const py::handle& value, std::optional<DType> dtype) {
  py::array arr;
  if (py::isinstance<py::array>(value)) {
    arr = py::reinterpret_borrow<py::array>(value);
  } else {
    // numpy scalars keep their dtype; Python values take `dtype` when given (checked).
    static py::handle generic = py::object(py::module_::import("numpy").attr("generic")).release();  // kept for the process
    arr = py::isinstance(value, generic) ? py::array(py::reinterpret_borrow<py::object>(value))
                                         : CheckedArray(value, dtype);
  }
  const DType dt = FromNumpyDType(arr.dtype());
  std::vector<int64_t> dims(arr.shape(), arr.shape() + arr.ndim());
  TensorShape shape(dims);
  const bool contiguous = (arr.flags() & py::array::c_style) != 0;
  const auto addr = reinterpret_cast<uintptr_t>(arr.data());
  if (contiguous && arr.nbytes() > 0 && addr % kTensorAlignment == 0) {
    // The tensor keeps the array alive; the last tensor to let go drops the reference (any thread).
    void* data = const_cast<void*>(arr.data());
    const auto bytes = static_cast<size_t>(arr.nbytes());
    PyObject* ref = arr.release().ptr();
    auto release = [ref] {
      if (!Py_IsInitialized() || _Py_IsFinalizing()) return;  // the interpreter is gone: nothing to free
      py::gil_scoped_acquire gil;
      Py_DECREF(ref);
    };
    return Tensor::FromBuffer(dt, shape, std::make_shared<Buffer>(data, bytes, MemoryKind::kHost, release));
  }
  Tensor t(dt, shape);
  if (t.bytes() > 0) {
    py::array c = py::array::ensure(arr, py::array::c_style);
    if (!c) throw py::error_already_set();
    std::memcpy(t.raw_data(), c.data(), t.bytes());
  }
  return t;
}

void InitTensors(py::module_& m) {
  py::enum_<DType>(m, "DType", "weft's element types (core/dtype.h).")
      .value("float32", DType::kFloat32)
      .value("float64", DType::kFloat64)
      .value("int32", DType::kInt32)
      .value("int64", DType::kInt64)
      .value("uint8", DType::kUInt8)
      .value("bool", DType::kBool)
      .value("float16", DType::kFloat16)
      .value("bfloat16", DType::kBFloat16)
      .def_property_readonly("size", [](DType d) { return DTypeSize(d); }, "Bytes per element.")
      .def_property_readonly("is_floating", [](DType d) { return IsFloating(d); })
      .def_property_readonly("is_integer", [](DType d) { return IsInteger(d); })
      .def_property_readonly("as_numpy_dtype", [](DType d) { return NumpyDType(d); }, "The numpy dtype.")
      .def("__str__", [](DType d) { return std::string(DTypeName(d)); })
      .def("__repr__", [](DType d) { return "weft." + std::string(DTypeName(d)); });
  m.def("as_dtype", [](const py::handle& h) { return ToDType(h); }, py::arg("type_value"),
        "The weft DType of a name (\"float32\"), a numpy dtype or type, or a DType.");
  m.def("_checked_array", [](const py::handle& value, const py::handle& dtype) {
    return CheckedArray(value, dtype.is_none() ? std::nullopt : std::optional<DType>(ToDType(dtype)));
  }, py::arg("value"), py::arg("dtype") = py::none(),
        "`value` as a numpy array of `dtype` (default: its own), rejecting what the conversion would lose: "
        "integers out of the dtype's range, NaN/inf or fractions of Python floats into integers, Python ints "
        "beyond int64 (InvalidArgumentError naming the value and dtype).");
  m.def("_tensor_roundtrip", [](const py::handle& a) { return TensorToNumpy(NumpyToTensor(a)); }, py::arg("array"),
        "numpy -> weft Tensor -> numpy, each step zero-copy where it can be (for tests).");
  m.def("_tensor_shares_input", [](const py::array& a) {
    Tensor t = NumpyToTensor(a);
    return t.raw_data() == a.data();
  }, py::arg("array"), "Whether the Tensor made from `array` shares its memory (for tests).");
}

}  // namespace weft::python
