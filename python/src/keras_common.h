// Handles shared by the weft.keras bindings (keras.cc, keras_model.cc).
#pragma once

#include "train/layer.h"
#include "train/optimizers.h"

#include "common.h"

namespace weft::python {

// A symbolic tensor of the functional API.
struct PySym {
  train::Sym sym;
};

// A learning-rate schedule (the C++ one is shared and const).
struct PySchedule {
  train::Schedule schedule;
};

// Losses, metrics, optimizers and schedules (keras_compile.cc), and the learning-rate accessors
// of the Model class (after InitKerasModel has registered it).
void InitKerasCompile(py::module_& k);

}  // namespace weft::python
