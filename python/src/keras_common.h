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

}  // namespace weft::python
