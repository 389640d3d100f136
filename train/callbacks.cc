#include "train/callbacks.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

#include "train/strategy.h"

namespace weft::train {
namespace {

double Monitored(const Logs& logs, const std::string& monitor, const char* who) {
  auto it = logs.find(monitor);
  if (it != logs.end()) return it->second;
  std::string known;
  for (const auto& [k, v] : logs) known += (known.empty() ? "" : ", ") + k;
  throw Error(errors::InvalidArgument("{}: monitored value '{}' is not in the logs (available: {}){}", who, monitor,
                                      known, monitor.rfind("val_", 0) == 0 ? "; pass validation data to Fit" : ""));
}

bool Improved(double value, double best, double min_delta, bool min) {
  return min ? value < best - min_delta : value > best + min_delta;
}

}  // namespace

bool MonitorIsMin(const std::string& monitor, const std::string& mode) {
  WEFT_REQUIRE(mode == "auto" || mode == "min" || mode == "max", "callback mode must be auto, min or max, got '{}'",
               mode);
  if (mode != "auto") return mode == "min";
  return monitor.find("loss") != std::string::npos || monitor.find("error") != std::string::npos;
}

ModelCheckpoint::ModelCheckpoint(std::string filepath, std::string monitor, bool save_best_only, std::string mode)
    : filepath_(std::move(filepath)), monitor_(std::move(monitor)), save_best_only_(save_best_only),
      min_(MonitorIsMin(monitor_, mode)),
      best_(min_ ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity()) {}

void ModelCheckpoint::OnEpochEnd(Model& model, int epoch, const Logs& logs) {
  if (save_best_only_) {
    const double v = Monitored(logs, monitor_, "ModelCheckpoint");
    if (!Improved(v, best_, 0.0, min_)) return;
    best_ = v;
  }
  if (model.strategy() != nullptr && !model.strategy()->is_chief()) {  // across workers: the chief writes
    if (model.optimizer_state_sharded()) model.SaveWeights("");  // its shards gathered (a collective step)
    return;
  }
  std::string path = filepath_;
  const size_t at = path.find("{epoch}");
  if (at != std::string::npos) path.replace(at, 7, std::to_string(epoch + 1));
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  model.SaveWeights(path);
  last_saved_ = path;
}

EarlyStopping::EarlyStopping(std::string monitor, int patience, double min_delta, std::string mode,
                             bool restore_best_weights)
    : monitor_(std::move(monitor)), patience_(patience), min_delta_(std::abs(min_delta)),
      min_(MonitorIsMin(monitor_, mode)), restore_(restore_best_weights) {
  WEFT_REQUIRE(patience >= 0, "EarlyStopping: patience must be >= 0, got {}", patience);
}

void EarlyStopping::OnTrainBegin(Model& model) {
  best_ = min_ ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
  wait_ = 0;
  stopped_epoch_ = -1;
  if (restore_) {
    best_path_ = (std::filesystem::temp_directory_path() /
                  fmt::format("weft-early-stopping-{}-{}.weft", getpid(), reinterpret_cast<uintptr_t>(this)))
                     .string();
  }
}

void EarlyStopping::OnEpochEnd(Model& model, int epoch, const Logs& logs) {
  const double v = Monitored(logs, monitor_, "EarlyStopping");
  if (Improved(v, best_, min_delta_, min_)) {
    best_ = v;
    wait_ = 0;
    if (restore_) model.SaveWeights(best_path_);
    return;
  }
  if (++wait_ > patience_) {
    stopped_epoch_ = epoch;
    model.StopTraining();
  }
}

void EarlyStopping::OnTrainEnd(Model& model) {
  if (!restore_ || best_path_.empty()) return;
  if (stopped_epoch_ >= 0 && std::filesystem::exists(best_path_)) model.LoadWeights(best_path_);
  std::error_code ec;
  std::filesystem::remove(best_path_, ec);
}

CSVLogger::CSVLogger(std::string filename, bool append) : filename_(std::move(filename)), append_(append) {}

CSVLogger::~CSVLogger() {
  if (file_ != nullptr) std::fclose(file_);
}

void CSVLogger::OnTrainBegin(Model& model) {
  const bool existed = append_ && std::filesystem::exists(filename_) && std::filesystem::file_size(filename_) > 0;
  file_ = std::fopen(filename_.c_str(), append_ ? "a" : "w");
  if (file_ == nullptr) {
    throw Error(errors::NotFound("CSVLogger: cannot open '{}': {}", filename_, std::strerror(errno)));
  }
  header_written_ = existed;
}

void CSVLogger::OnEpochEnd(Model& model, int epoch, const Logs& logs) {
  if (file_ == nullptr) return;
  if (!header_written_) {
    std::string header = "epoch";
    for (const auto& [k, v] : logs) header += "," + k;
    std::fprintf(file_, "%s\n", header.c_str());
    header_written_ = true;
  }
  std::string row = std::to_string(epoch + 1);
  for (const auto& [k, v] : logs) row += fmt::format(",{}", v);
  std::fprintf(file_, "%s\n", row.c_str());
  std::fflush(file_);
}

void CSVLogger::OnTrainEnd(Model& model) {
  if (file_ != nullptr) std::fclose(file_);
  file_ = nullptr;
}

}  // namespace weft::train
