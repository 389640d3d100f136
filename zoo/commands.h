// The weft-zoo commands (zoo/main.cc is the program around them).
#pragma once

#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "train/model.h"
#include "train/pipeline.h"
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

// zoo/commands_text.cc. `weft-zoo generate MODEL --checkpoint PATH [--prompt S] [--length N]
// [--temperature T] [--seed N]`: prints the prompt and `length` sampled characters.
int GenerateCommand(const std::vector<std::string>& args);
// `length` characters sampled after `prompt` from a text model (each from softmax(logits / T) at
// the last position of the last context-many characters), with a seeded generator.
struct ZooModel;
std::string SampleText(train::Model& model, const ZooModel& zm, const std::string& prompt, int64_t length,
                       double temperature, uint64_t seed);

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
// `--strategy pipeline` under a cluster (TF_CONFIG set, as `weft-zoo launch` does): stage i on
// training task i (distributed/pipeline_strategy.h), the strategy owning this task's server;
// options.num_stages 0: one stage per task.
std::unique_ptr<Strategy> MakeClusterPipelineStrategy(const PipelineOptions& options);
// `weft-zoo train --strategy pipeline` under a cluster on a task other than the first (stage 0,
// the client): serves its stage until the client is done; returns the exit status (1 when the
// client went away in the middle of training: Unavailable naming it). -1: this task trains.
int ServePipelineStage();

// The data a `--data` value names for model zm: "fashion-mnist", "mnist:DIR" or "synthetic" (a
// synthetic set of zm.synthetic_shape examples: 10,000 for training, 2,000 for test, one
// distribution; text models: 1,000 and 200 windows of random ids), and for text models "fortunes"
// (next-character windows of Debian's fortunes, the last 5% for test).
void LoadZooData(const std::string& spec, const ZooModel& zm, data::ArrayData* train_data,
                 data::ArrayData* test_data);

}  // namespace weft::zoo
