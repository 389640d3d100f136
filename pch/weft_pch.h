// Precompiled header: the heavy third-party headers nearly every file includes (Eigen's Tensor
// module alone takes seconds to parse). Only a build-speed device; sources include what they use.
#include <unsupported/Eigen/CXX11/Tensor>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <variant>
#include <vector>
