// The distributed commands of weft-zoo (zoo/commands.cc dispatches to them).
#pragma once

#include <string>
#include <vector>

#include "zoo/commands.h"

namespace weft::zoo {

// weft-zoo launch -n N [--ps M] [--chief] [--host ADDR] [--grace SECONDS] -- COMMAND [ARGS...]
int LaunchCommand(const std::vector<std::string>& args);

}  // namespace weft::zoo
