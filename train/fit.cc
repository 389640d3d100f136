// The training loop: Fit, Evaluate, Predict and TrainOnBatch over the compiled graph.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <utility>

#include "train/strategy.h"
#include "train/callbacks.h"
#include "data/dataset.h"
#include "train/model_internal.h"
#include "train/progress.h"

namespace weft::train {

using data::Element;
using data::Iterator;
namespace {

// Converts numeric arrays on the host (Keras accepts uint8 images and integer labels of any width).
Tensor CastOnHost(const Tensor& t, DType to, const char* what) {
  if (t.dtype() == to) return t;
  Tensor out(to, t.shape());
  Dispatch<WEFT_NUMBER_TYPES>(t.dtype(), what, [&](auto from) {
    using F = typename decltype(from)::type;
    Dispatch<float, int32_t>(to, what, [&](auto dst) {
      using D = typename decltype(dst)::type;
      const F* src = t.data<F>();
      D* o = out.data<D>();
      for (int64_t i = 0; i < t.num_elements(); ++i) o[i] = static_cast<D>(src[i]);
    });
  });
  return out;
}

// Running means of a step's logs, weighted by batch size.
struct Averager {
  std::map<std::string, double> sum;
  int64_t samples = 0;
  void Add(const Logs& logs, int64_t n) {
    for (const auto& [k, v] : logs) sum[k] += v * static_cast<double>(n);
    samples += n;
  }
  Logs Mean() const {
    Logs out;
    for (const auto& [k, v] : sum) out[k] = samples > 0 ? v / static_cast<double>(samples) : 0.0;
    return out;
  }
};

}  // namespace

// Checks x (and y) against the compiled model and converts their dtypes; names both shapes on a mismatch.
static void PrepareArrays(const std::string& model, const TensorShape& input, const Output& y_ph, Tensor* x,
                          Tensor* y, const char* what) {
  WEFT_REQUIRE(x->shape().rank() == input.rank(), "Model '{}'.{}: x has shape {} but the model's input is {}",
               model, what, x->shape().ToString(), input.ToString());
  for (int i = 1; i < input.rank(); ++i) {
    WEFT_REQUIRE(input.dim(i) < 0 || input.dim(i) == x->shape().dim(i),
                 "Model '{}'.{}: x has shape {} but the model's input is {}", model, what, x->shape().ToString(),
                 input.ToString());
  }
  *x = CastOnHost(*x, DType::kFloat32, "model input x");
  if (y == nullptr) return;
  WEFT_REQUIRE(y->shape().rank() >= 1 && y->shape().dim(0) == x->shape().dim(0),
               "Model '{}'.{}: x has {} examples ({}) but y has shape {}", model, what, x->shape().dim(0),
               x->shape().ToString(), y->shape().ToString());
  const TensorShape& want = y_ph.shape();
  *y = MatchLabelRank(*y, want);  // [n, 1] sparse labels, [n] labels of a one-unit output
  bool ok = want.rank() < 0 || want.rank() == y->shape().rank();
  for (int i = 1; ok && i < want.rank(); ++i) ok = want.dim(i) < 0 || want.dim(i) == y->shape().dim(i);
  WEFT_REQUIRE(ok, "Model '{}'.{}: y has shape {} but the loss expects labels of shape {}", model, what,
               y->shape().ToString(), want.ToString());
  *y = CastOnHost(*y, y_ph.dtype(), "model labels y");
}

std::vector<std::pair<std::string, const Graph*>> Model::TrainStepPartitions() {
  RequireCompiled("TrainStepPartitions");
  std::vector<Output> feeds = {c_->lr};
  for (size_t r = 0; r < c_->xs.size(); ++r) {
    feeds.push_back(c_->xs[r]);
    feeds.push_back(c_->ys[r]);
    feeds.push_back(c_->sample_weights[r]);
  }
  if (c_->global_batch.valid()) feeds.push_back(c_->global_batch);
  std::vector<Output> fetches = {c_->loss};
  fetches.insert(fetches.end(), c_->metrics.begin(), c_->metrics.end());
  return session_->Partitions(feeds, fetches, {c_->train});
}

double Model::TrainStep(const Tensor& x, const Tensor& y, const Tensor* sample_weight, MetricTotals* totals) {
  const float lr = static_cast<float>(learning_rate());
  const int64_t n = x.shape().rank() > 0 ? x.shape().dim(0) : 0;
  Tensor sw;
  if (sample_weight != nullptr) {
    WEFT_REQUIRE(sample_weight->shape().rank() == 1 && sample_weight->shape().dim(0) == n,
                 "Model '{}': sample_weight has shape {} but the batch has {} examples (x: {})", name_,
                 sample_weight->shape().ToString(), n, x.shape().ToString());
    sw = CastOnHost(*sample_weight, DType::kFloat32, "sample_weight");
  } else {
    sw = Tensor(DType::kFloat32, TensorShape{n});
    std::fill_n(sw.data<float>(), n, 1.0f);
  }
  std::vector<Output> fetches = {c_->loss};
  fetches.insert(fetches.end(), c_->metrics.begin(), c_->metrics.end());
  std::vector<std::pair<Output, Tensor>> feeds = {{c_->lr, Tensor::Scalar<float>(lr)}};
  if (!c_->global_batch.valid()) {  // not replicated
    feeds.emplace_back(c_->x, x);
    feeds.emplace_back(c_->y, y);
    feeds.emplace_back(c_->sample_weights[0], sw);
  } else {  // a replicated step: each replica gets its slice of the global batch
    std::vector<std::vector<Tensor>> parts = strategy_->SplitBatch({x, y, sw});  // every worker's replicas
    for (size_t r = 0; r < c_->xs.size(); ++r) {
      const size_t part = static_cast<size_t>(strategy_->first_replica()) + r;
      feeds.emplace_back(c_->xs[r], parts[part][0]);
      feeds.emplace_back(c_->ys[r], parts[part][1]);
      feeds.emplace_back(c_->sample_weights[r], parts[part][2]);
    }
    feeds.emplace_back(c_->global_batch, Tensor::Scalar<float>(static_cast<float>(x.shape().dim(0))));
  }
  StepTrace* trace = std::exchange(trace_next_, nullptr);
  // Across workers every worker runs this step together: its id comes from the shared sequence.
  std::vector<Tensor> out = session_->Run(feeds, fetches, {c_->train}, RunOptions{.collective = true, .trace = trace});
  ++step_;
  if (strategy_ != nullptr) strategy_->RecordStep(x.shape().dim(0), session_->collectives().active_seconds());
  totals->Add(std::vector<Tensor>(out.begin() + 1, out.end()));
  return out[0].scalar<float>()();
}

Logs Model::TrainOnBatch(const Tensor& x_in, const Tensor& y_in, const Tensor* sample_weight) {
  RequireCompiled("TrainOnBatch");
  Tensor x = x_in, y = y_in;  // checked and converted as Fit's
  PrepareArrays(name_, input_shape(), c_->y, &x, &y, "TrainOnBatch");
  MetricTotals totals(c_->metric_defs);  // this batch's values, as Keras' reset_metrics=True
  const double loss = TrainStep(x, y, sample_weight, &totals);
  Logs logs = totals.Results();
  logs["loss"] = loss;
  return logs;
}

History Model::Fit(const Tensor& x_in, const Tensor& y_in, FitOptions o) {
  RequireCompiled("Fit");
  WEFT_REQUIRE(o.batch_size > 0, "Model '{}'.Fit: batch_size must be positive, got {}", name_, o.batch_size);
  Tensor x = x_in, y = y_in;
  PrepareArrays(name_, input_shape(), c_->y, &x, &y, "Fit");
  Tensor vx, vy;
  if (o.validation_x != nullptr) {
    WEFT_REQUIRE(o.validation_y != nullptr, "Model '{}'.Fit: validation_x given without validation_y", name_);
    vx = *o.validation_x;
    vy = *o.validation_y;
    PrepareArrays(name_, input_shape(), c_->y, &vx, &vy, "Fit (validation data)");
    o.validation_x = &vx;
    o.validation_y = &vy;
  }
  if (o.sample_weight != nullptr) {
    WEFT_REQUIRE(o.sample_weight->shape().rank() == 1 && o.sample_weight->shape().dim(0) == x.shape().dim(0),
                 "Model '{}'.Fit: sample_weight has shape {} but x has {} examples ({})", name_,
                 o.sample_weight->shape().ToString(), x.shape().dim(0), x.shape().ToString());
  }
  History h;
  RunEpochs(nullptr, &x, &y, o, &h);
  return h;
}

History Model::Fit(const Dataset& data, FitOptions o) {
  RequireCompiled("Fit");
  WEFT_REQUIRE(data.Cardinality() != data::kInfiniteCardinality || o.steps_per_epoch > 0,
               "Model '{}'.Fit: the dataset is infinite ({}); give steps_per_epoch", name_, data.DebugString());
  History h;
  RunEpochs(&data, nullptr, nullptr, o, &h);
  return h;
}

void Model::RunEpochs(const Dataset* fixed, const Tensor* x, const Tensor* y, FitOptions& o, History* h) {
  WEFT_REQUIRE(o.epochs >= 0 && o.initial_epoch >= 0, "Model '{}'.Fit: epochs ({}) and initial_epoch ({}) must be >= 0",
               name_, o.epochs, o.initial_epoch);
  WEFT_REQUIRE(o.progress_out != nullptr, "Model '{}'.Fit: progress_out is null (stdout is the default)", name_);
  stop_training_ = false;
  std::unique_ptr<Iterator> it;
  int64_t pass_steps = 0;  // batches taken from `it` so far
  int64_t fit_steps = 0;   // batches trained on in this call
  for (auto& cb : o.callbacks) cb->OnTrainBegin(*this);
  for (int epoch = o.initial_epoch; epoch < o.epochs && !stop_training_; ++epoch) {
    for (auto& cb : o.callbacks) cb->OnEpochBegin(*this, epoch);
    Dataset data;
    if (fixed != nullptr) {
      data = *fixed;
    } else {
      // A fresh order per epoch from (seed, epoch): a resumed run sees the same batches.
      data = o.sample_weight != nullptr ? Dataset::FromTensors({*x, *y, *o.sample_weight})
                                        : Dataset::FromTensors({*x, *y});
      if (strategy_ != nullptr && strategy_->input_shard().second > 1) {  // this worker's rows (async ps)
        data = data.Shard(strategy_->input_shard().second, strategy_->input_shard().first);
      }
      if (o.shuffle) data = data.Shuffle(o.shuffle_seed * 1000003u + static_cast<uint64_t>(epoch), -1, false);
      data = data.Batch(o.batch_size);
    }
    int64_t total = data.Cardinality();
    if (o.steps_per_epoch > 0) total = total >= 0 ? std::min(total, o.steps_per_epoch) : o.steps_per_epoch;
    ProgressBar bar(total, o.progress_out);
    if (o.verbose > 0) bar.Begin(epoch + 1, o.epochs);
    // A user's dataset with steps_per_epoch: one iterator runs on across epochs (Keras).
    const bool carry_on = fixed != nullptr && o.steps_per_epoch > 0;
    if (!carry_on || it == nullptr) {
      it = data.Prefetch(2).MakeIterator();
      pass_steps = 0;
    }
    Averager avg;  // the loss, weighted by batch size
    MetricTotals totals(c_->metric_defs);
    auto running = [&] {  // the epoch so far, as Keras logs it at each batch and at the end
      Logs logs = totals.Results();
      for (const auto& [k, v] : avg.Mean()) logs[k] = v;
      return logs;
    };
    int64_t steps = 0;
    Element batch;
    bool ran_out = false;
    while ((o.steps_per_epoch < 0 || steps < o.steps_per_epoch) && !(ran_out = !it->Next(&batch))) {
      WEFT_REQUIRE(batch.size() == 2 || batch.size() == 3,
                   "Model '{}'.Fit: data elements must be {{x, y}} or {{x, y, sample_weight}}, got {} components",
                   name_, batch.size());
      Tensor bx = batch[0], by = batch[1];
      if (fixed != nullptr) PrepareArrays(name_, input_shape(), c_->y, &bx, &by, "Fit");
      const int64_t n = bx.shape().dim(0);
      ++pass_steps;
      for (auto& cb : o.callbacks) cb->OnBatchBegin(*this, steps);
      avg.Add({{"loss", TrainStep(bx, by, batch.size() == 3 ? &batch[2] : nullptr, &totals)}}, n);
      ++steps;
      // As Keras 3: a batch's logs are the means over the epoch so far.
      const Logs logs = running();
      for (auto& cb : o.callbacks) cb->OnBatchEnd(*this, steps - 1, logs);
      if (o.verbose == 1) bar.Update(steps, avg.samples, logs);  // 2: one line per epoch
      if (stop_training_) break;
    }
    fit_steps += steps;
    // Keras raises ValueError for data that gives no batch at all (not for a repeated pass that ran dry).
    WEFT_REQUIRE(!(ran_out && fit_steps == 0), "Model '{}'.Fit: the training data gave no batch (0 samples): nothing "
                 "to train on", name_);
    if (ran_out || pass_steps == data.Cardinality()) it.reset();  // the next epoch starts a new pass
    if (fixed != nullptr && steps == 0 && ran_out) {
      std::fprintf(stderr, "WARNING: Model '%s'.Fit: your input ran out of data; interrupting training. Make sure "
                   "that your dataset or generator can generate at least `steps_per_epoch * epochs` batches. You may "
                   "need to use the repeat() function when building your dataset.\n", name_.c_str());
      break;
    }
    Logs logs = running();
    const bool validate = o.validation_epochs.empty() ||
                          std::find(o.validation_epochs.begin(), o.validation_epochs.end(), epoch + 1) !=
                              o.validation_epochs.end();
    if (o.validation_x != nullptr && validate) {
      for (const auto& [k, v] : Evaluate(*o.validation_x, *o.validation_y, o.batch_size)) logs["val_" + k] = v;
    }
    if (o.validation_data != nullptr && validate) {
      const Dataset val = o.validation_steps > 0 ? o.validation_data->Take(o.validation_steps) : *o.validation_data;
      for (const auto& [k, v] : Evaluate(val)) logs["val_" + k] = v;
    }
    if (o.verbose > 0) bar.Finish(steps, avg.samples, logs);
    h->epochs.push_back(epoch);
    for (const auto& [k, v] : logs) h->history[k].push_back(v);
    for (auto& cb : o.callbacks) cb->OnEpochEnd(*this, epoch, logs);
  }
  for (auto& cb : o.callbacks) cb->OnTrainEnd(*this);
}

Logs Model::Evaluate(const Tensor& x_in, const Tensor& y_in, int64_t batch_size) {
  RequireCompiled("Evaluate");
  WEFT_REQUIRE(batch_size > 0, "Model '{}'.Evaluate: batch_size must be positive, got {}", name_, batch_size);
  Tensor x = x_in, y = y_in;
  PrepareArrays(name_, input_shape(), c_->y, &x, &y, "Evaluate");
  return EvaluateBatches(Dataset::FromTensors({x, y}).Batch(batch_size));
}

Logs Model::Evaluate(const Dataset& data) {
  RequireCompiled("Evaluate");
  WEFT_REQUIRE(data.Cardinality() != data::kInfiniteCardinality, "Model '{}'.Evaluate: the dataset is infinite ({}); "
               "take a finite part (steps)", name_, data.DebugString());
  return EvaluateBatches(data);
}

Logs Model::EvaluateBatches(const Dataset& data) {
  std::vector<Output> fetches = {c_->eval_loss};
  fetches.insert(fetches.end(), c_->eval_metrics.begin(), c_->eval_metrics.end());
  std::vector<Output> weighted_fetches = fetches;
  weighted_fetches[0] = c_->eval_weighted_loss;
  std::unique_ptr<Iterator> it = data.Prefetch(2).MakeIterator();
  Averager avg;
  MetricTotals totals(c_->metric_defs);
  Element batch;
  int64_t batches = 0;
  while (it->Next(&batch)) {
    ++batches;
    WEFT_REQUIRE(batch.size() == 2 || batch.size() == 3,
                 "Model '{}'.Evaluate: data elements must be {{x, y}} or {{x, y, sample_weight}}, got {} components",
                 name_, batch.size());
    Tensor bx = batch[0], by = batch[1];
    PrepareArrays(name_, input_shape(), c_->y, &bx, &by, "Evaluate");
    std::vector<std::pair<Output, Tensor>> feeds = {{c_->x, bx}, {c_->y, by}};
    const bool weighted = batch.size() == 3;
    if (weighted) {
      const int64_t n = bx.shape().dim(0);
      WEFT_REQUIRE(batch[2].shape().rank() == 1 && batch[2].shape().dim(0) == n,
                   "Model '{}'.Evaluate: sample_weight has shape {} but the batch has {} examples (x: {})", name_,
                   batch[2].shape().ToString(), n, bx.shape().ToString());
      feeds.emplace_back(c_->eval_sample_weight, CastOnHost(batch[2], DType::kFloat32, "sample_weight"));
    }
    // A local step: each worker evaluates on its own (its metrics are not all-reduced).
    std::vector<Tensor> out = session_->Run(feeds, weighted ? weighted_fetches : fetches, {},
                                            RunOptions{.collective = false});
    avg.Add({{"loss", out[0].scalar<float>()()}}, bx.shape().dim(0));
    totals.Add(std::vector<Tensor>(out.begin() + 1, out.end()));
  }
  // A mean over no batch is no number (Keras raises ValueError for empty data).
  WEFT_REQUIRE(batches > 0, "Model '{}'.Evaluate: the data gave no batch (0 samples): nothing to evaluate", name_);
  Logs logs = totals.Results();
  logs["loss"] = avg.Mean()["loss"];
  return logs;
}

Tensor Model::Predict(const Tensor& x_in, int64_t batch_size) {
  RequireCompiled("Predict");
  WEFT_REQUIRE(batch_size > 0, "Model '{}'.Predict: batch_size must be positive, got {}", name_, batch_size);
  Tensor x = x_in;
  PrepareArrays(name_, input_shape(), c_->y, &x, nullptr, "Predict");
  const int64_t n = x.shape().dim(0);
  std::vector<int64_t> dims = {n};
  for (int i = 1; i < output_shape().rank(); ++i) dims.push_back(output_shape().dim(i));
  Tensor result(DType::kFloat32, TensorShape(dims));
  std::unique_ptr<Iterator> it = Dataset::FromTensors({x}).Batch(batch_size).Prefetch(2).MakeIterator();
  Element batch;
  int64_t done = 0;
  char* dst = static_cast<char*>(result.raw_data());
  while (it->Next(&batch)) {
    Tensor out = session_->Run({{c_->x, batch[0]}}, {c_->pred})[0];
    std::memcpy(dst, out.raw_data(), out.bytes());
    dst += out.bytes();
    done += out.shape().dim(0);
  }
  WEFT_REQUIRE(done == n, "Model '{}'.Predict: produced {} rows for {} inputs", name_, done, n);
  return result;
}

Tensor Model::Predict(const Dataset& data) {
  RequireCompiled("Predict");
  WEFT_REQUIRE(data.Cardinality() != data::kInfiniteCardinality, "Model '{}'.Predict: the dataset is infinite ({}); "
               "take a finite part (steps)", name_, data.DebugString());
  std::unique_ptr<Iterator> it = data.Prefetch(2).MakeIterator();
  std::vector<Tensor> outs;
  int64_t rows = 0;
  Element batch;
  while (it->Next(&batch)) {
    WEFT_REQUIRE(!batch.empty(), "Model '{}'.Predict: a dataset element has no components", name_);
    Tensor bx = batch[0];
    PrepareArrays(name_, input_shape(), c_->y, &bx, nullptr, "Predict");
    outs.push_back(session_->Run({{c_->x, bx}}, {c_->pred})[0]);
    rows += outs.back().shape().dim(0);
  }
  std::vector<int64_t> dims = {rows};
  for (int i = 1; i < output_shape().rank(); ++i) dims.push_back(output_shape().dim(i));
  Tensor result(DType::kFloat32, TensorShape(dims));
  char* dst = static_cast<char*>(result.raw_data());
  for (const Tensor& t : outs) {
    std::memcpy(dst, t.raw_data(), t.bytes());
    dst += t.bytes();
  }
  return result;
}

}  // namespace weft::train
