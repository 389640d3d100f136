// The weft-zoo commands (zoo/main.cc is the program around them).
#pragma once

#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "train/strategy.h"
#include "data/datasets.h"

namespace weft::zoo {

// A command line that does not make sense (unknown command or flag, missing value).
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// `--name value`, `--name=value` and boolean `--name`; positional arguments in order.
class Flags {
 public:
  Flags(const std::vector<std::string>& args, const std::set<std::string>& valued,
        const std::set<std::string>& boolean);
  bool Has(const std::string& name) const { return values_.count(name) > 0; }
  std::string Str(const std::string& name, const std::string& fallback) const;
  int64_t Int(const std::string& name, int64_t fallback, int64_t min = 0) const;
  double Float(const std::string& name, double fallback) const;
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  std::map<std::string, std::string> values_;
  std::vector<std::string> positional_;
};

// Runs `args` (command first); returns the exit status.
int RunCommand(const std::vector<std::string>& args);

// `weft-zoo server` (zoo/commands_server.cc; built with UCX only): this task's server until stopped.
int ServerCommand(const std::vector<std::string>& args);
// `--strategy parameter_server --ps-mode sync|async`: this process's task's server from
// TF_CONFIG, owned by the strategy.
std::unique_ptr<Strategy> MakeParameterServerStrategy(const std::string& mode);
// `weft-zoo train --strategy parameter_server` on a task that does not train (a ps task; in sync
// mode a worker other than worker:0): serves, returns the exit status. -1: this task trains.
int ServeParameterServerTask(const std::string& mode);

// The data a `--data` value names: "fashion-mnist", "mnist:DIR" or "synthetic" (a synthetic
// set of `synthetic_shape` examples: 10,000 for training, 2,000 for test, one distribution).
void LoadZooData(const std::string& spec, const TensorShape& synthetic_shape, data::ArrayData* train_data,
                 data::ArrayData* test_data);

}  // namespace weft::zoo
