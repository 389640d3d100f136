// Callbacks Fit calls at the edges of training, epochs and batches (Keras' names and meaning).
//
//   auto stop = std::make_shared<EarlyStopping>("val_loss", /*patience=*/2);
//   auto save = std::make_shared<ModelCheckpoint>("ckpt/epoch-{epoch}.weft");
//   auto csv = std::make_shared<CSVLogger>("train.csv");
//   model.Fit(x, y, {.epochs = 20, .validation_x = &xv, .validation_y = &yv, .callbacks = {stop, save, csv}});
//
// Epochs are numbered from 0 in calls (Keras' convention) and from 1 in file names and logs.
#pragma once

#include <cstdio>
#include <memory>
#include <string>

#include "train/model.h"

namespace weft::train {

class Callback {
 public:
  virtual ~Callback() = default;
  virtual void OnTrainBegin(Model& model) {}
  virtual void OnEpochBegin(Model& model, int epoch) {}
  virtual void OnBatchBegin(Model& model, int64_t batch) {}
  // `logs`: the means of the loss and metrics over the epoch's batches so far (as Keras 3).
  virtual void OnBatchEnd(Model& model, int64_t batch, const Logs& logs) {}
  virtual void OnEpochEnd(Model& model, int epoch, const Logs& logs) {}
  virtual void OnTrainEnd(Model& model) {}
};

// "min" when the monitored name contains "loss" (or "error"), else "max".
bool MonitorIsMin(const std::string& monitor, const std::string& mode);

// Saves the model's variables (SaveWeights) after each epoch to `filepath`, where "{epoch}"
// is replaced by the 1-based epoch number; with save_best_only, only when `monitor` improves.
class ModelCheckpoint : public Callback {
 public:
  explicit ModelCheckpoint(std::string filepath, std::string monitor = "val_loss", bool save_best_only = false,
                           std::string mode = "auto");
  void OnEpochEnd(Model& model, int epoch, const Logs& logs) override;
  const std::string& last_saved() const { return last_saved_; }

 private:
  std::string filepath_, monitor_;
  bool save_best_only_, min_;
  double best_;
  std::string last_saved_;
};

// Stops training when `monitor` has not improved by more than min_delta for `patience`
// epochs; with restore_best_weights, puts back the weights of the best epoch.
class EarlyStopping : public Callback {
 public:
  explicit EarlyStopping(std::string monitor = "val_loss", int patience = 0, double min_delta = 0.0,
                         std::string mode = "auto", bool restore_best_weights = false);
  void OnTrainBegin(Model& model) override;
  void OnEpochEnd(Model& model, int epoch, const Logs& logs) override;
  void OnTrainEnd(Model& model) override;
  int stopped_epoch() const { return stopped_epoch_; }  // -1 when it did not stop training

 private:
  std::string monitor_;
  int patience_;
  double min_delta_;
  bool min_, restore_;
  double best_ = 0;
  int wait_ = 0, stopped_epoch_ = -1;
  std::string best_path_;
};

// Writes one CSV row per epoch: "epoch,<log names sorted>"; the header comes from the first
// epoch's logs. `append` continues an existing file (resumed training).
class CSVLogger : public Callback {
 public:
  explicit CSVLogger(std::string filename, bool append = false);
  ~CSVLogger() override;
  void OnTrainBegin(Model& model) override;
  void OnEpochEnd(Model& model, int epoch, const Logs& logs) override;
  void OnTrainEnd(Model& model) override;

 private:
  std::string filename_;
  bool append_;
  std::FILE* file_ = nullptr;
  bool header_written_ = false;
};

}  // namespace weft::train
