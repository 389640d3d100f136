// `weft._weft.data.Dataset`: the handle Python holds on a C++ data::Dataset (data.cc), shared with
// the Keras bindings that train on one (keras_model.cc).
#pragma once

#include "data/dataset.h"

#include "common.h"

namespace weft::python {

struct PyDataset {
  data::Dataset ds;
};

void InitData(py::module_& m);

}  // namespace weft::python
