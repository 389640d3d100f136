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
    Dispatch<float, int32_t, int64_t>(to, what, [&](auto dst) {
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

// Checks one array's shape against a model input and converts it to the input's dtype (ids out
// of range are the Embedding kernel's error, naming the id).
static Tensor PrepareInput(const std::string& model, const SymNode& input, size_t i, size_t n, const Tensor& x,
                           const char* what) {
  const TensorShape& want = input.shape;
  const std::string which = n == 1 ? "x" : fmt::format("x[{}] (input '{}')", i, input.name);
  bool ok = x.shape().rank() == want.rank();
  for (int d = 1; ok && d < want.rank(); ++d) ok = want.dim(d) < 0 || want.dim(d) == x.shape().dim(d);
  WEFT_REQUIRE(ok, "Model '{}'.{}: {} has shape {} but the model's input is {}", model, what, which,
               x.shape().ToString(), want.ToString());
  return CastOnHost(x, input.dtype, "model input x");
}

void Model::PrepareArrays(std::vector<Tensor>* xs, std::vector<Tensor>* ys, const char* what) const {
  WEFT_REQUIRE(xs->size() == inputs_.size(), "Model '{}'.{}: the model has {} input(s), got {} input array(s)", name_,
               what, inputs_.size(), xs->size());
  for (size_t i = 0; i < xs->size(); ++i) (*xs)[i] = PrepareInput(name_, *inputs_[i], i, xs->size(), (*xs)[i], what);
  const int64_t n = (*xs)[0].shape().rank() > 0 ? (*xs)[0].shape().dim(0) : 0;
  for (size_t i = 1; i < xs->size(); ++i) {
    WEFT_REQUIRE((*xs)[i].shape().dim(0) == n, "Model '{}'.{}: x[0] has {} examples ({}) but x[{}] has shape {}",
                 name_, what, n, (*xs)[0].shape().ToString(), i, (*xs)[i].shape().ToString());
  }
  if (ys == nullptr) return;
  WEFT_REQUIRE(ys->size() == outputs_.size(), "Model '{}'.{}: the model has {} output(s), got {} label array(s)",
               name_, what, outputs_.size(), ys->size());
  for (size_t i = 0; i < ys->size(); ++i) {
    Tensor& y = (*ys)[i];
    const std::string which = ys->size() == 1 ? "y" : fmt::format("y[{}]", i);
    WEFT_REQUIRE(y.shape().rank() >= 1 && y.shape().dim(0) == n, "Model '{}'.{}: x has {} examples ({}) but {} has "
                 "shape {}", name_, what, n, (*xs)[0].shape().ToString(), which, y.shape().ToString());
    const Output& y_ph = c_->y[i];
    const TensorShape& want = y_ph.shape();
    y = MatchLabelRank(y, want);  // [n, 1] sparse labels, [n] labels of a one-unit output
    bool ok = want.rank() < 0 || want.rank() == y.shape().rank();
    for (int d = 1; ok && d < want.rank(); ++d) ok = want.dim(d) < 0 || want.dim(d) == y.shape().dim(d);
    WEFT_REQUIRE(ok, "Model '{}'.{}: {} has shape {} but the loss expects labels of shape {}", name_, what, which,
                 y.shape().ToString(), want.ToString());
    y = CastOnHost(y, y_ph.dtype(), "model labels y");
  }
}

void Model::SplitElement(const std::vector<Tensor>& element, std::vector<Tensor>* xs, std::vector<Tensor>* ys,
                         const Tensor** sample_weight, const char* what) const {
  const size_t k = inputs_.size(), m = outputs_.size();
  WEFT_REQUIRE(element.size() == k + m || element.size() == k + m + 1,
               "Model '{}'.{}: data elements must be {{x, y}} or {{x, y, sample_weight}} with {} input and {} label "
               "component(s), got {} components", name_, what, k, m, element.size());
  xs->assign(element.begin(), element.begin() + static_cast<std::ptrdiff_t>(k));
  ys->assign(element.begin() + static_cast<std::ptrdiff_t>(k), element.begin() + static_cast<std::ptrdiff_t>(k + m));
  *sample_weight = element.size() == k + m + 1 ? &element.back() : nullptr;
}

std::vector<std::pair<std::string, const Graph*>> Model::TrainStepPartitions() {
  RequireCompiled("TrainStepPartitions");
  std::vector<Output> feeds = {c_->lr};
  for (size_t r = 0; r < c_->xs.size(); ++r) {
    feeds.insert(feeds.end(), c_->xs[r].begin(), c_->xs[r].end());
    feeds.insert(feeds.end(), c_->ys[r].begin(), c_->ys[r].end());
    feeds.push_back(c_->sample_weights[r]);
  }
  if (c_->global_batch.valid()) feeds.push_back(c_->global_batch);
  std::vector<Output> fetches = {c_->loss};
  fetches.insert(fetches.end(), c_->metrics.begin(), c_->metrics.end());
  return session_->Partitions(feeds, fetches, {c_->train});
}

double Model::TrainStep(const std::vector<Tensor>& xs, const std::vector<Tensor>& ys, const Tensor* sample_weight,
                        MetricTotals* totals) {
  const float lr = static_cast<float>(learning_rate());
  const Tensor& x = xs[0];
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
  const size_t k = xs.size(), m = ys.size();
  if (!c_->global_batch.valid()) {  // not replicated
    for (size_t i = 0; i < k; ++i) feeds.emplace_back(c_->x[i], xs[i]);
    for (size_t i = 0; i < m; ++i) feeds.emplace_back(c_->y[i], ys[i]);
    feeds.emplace_back(c_->sample_weights[0], sw);
  } else {  // a replicated step: each replica gets its slice of the global batch
    std::vector<Tensor> all = xs;
    all.insert(all.end(), ys.begin(), ys.end());
    all.push_back(sw);
    std::vector<std::vector<Tensor>> parts = strategy_->SplitBatch(all);  // every worker's replicas
    for (size_t r = 0; r < c_->xs.size(); ++r) {
      const size_t part = static_cast<size_t>(strategy_->first_replica()) + r;
      for (size_t i = 0; i < k; ++i) feeds.emplace_back(c_->xs[r][i], parts[part][i]);
      for (size_t i = 0; i < m; ++i) feeds.emplace_back(c_->ys[r][i], parts[part][k + i]);
      feeds.emplace_back(c_->sample_weights[r], parts[part][k + m]);
    }
    feeds.emplace_back(c_->global_batch, Tensor::Scalar<float>(static_cast<float>(x.shape().dim(0))));
  }
  StepTrace* trace = std::exchange(trace_next_, nullptr);
  // Across workers every worker runs this step together: its id comes from the shared sequence.
  // Keras' update step under gradient accumulation: (iterations + 1) % k == 0.
  const int64_t k_acc = c_->options.optimizer.gradient_accumulation_steps;
  Node* target = c_->accumulate != nullptr && (step_ + 1) % k_acc != 0 ? c_->accumulate : c_->train;
  std::vector<Tensor> out = session_->Run(feeds, fetches, {target}, RunOptions{.collective = true, .trace = trace});
  ++step_;
  if (strategy_ != nullptr) strategy_->RecordStep(x.shape().dim(0), session_->collectives().active_seconds());
  totals->Add(std::vector<Tensor>(out.begin() + 1, out.end()));
  return out[0].scalar<float>()();
}

Logs Model::TrainOnBatch(const Tensor& x, const Tensor& y, const Tensor* sample_weight) {
  return TrainOnBatch(std::vector<Tensor>{x}, std::vector<Tensor>{y}, sample_weight);
}

Logs Model::TrainOnBatch(const std::vector<Tensor>& xs_in, const std::vector<Tensor>& ys_in,
                         const Tensor* sample_weight) {
  RequireCompiled("TrainOnBatch");
  std::vector<Tensor> xs = xs_in, ys = ys_in;  // checked and converted as Fit's
  PrepareArrays(&xs, &ys, "TrainOnBatch");
  MetricTotals totals(c_->metric_defs);  // this batch's values, as Keras' reset_metrics=True
  const double loss = TrainStep(xs, ys, sample_weight, &totals);
  Logs logs = totals.Results();
  logs["loss"] = loss;
  return logs;
}

History Model::Fit(const Tensor& x, const Tensor& y, FitOptions o) {
  return Fit(std::vector<Tensor>{x}, std::vector<Tensor>{y}, std::move(o));
}

History Model::Fit(const std::vector<Tensor>& xs_in, const std::vector<Tensor>& ys_in, FitOptions o) {
  RequireCompiled("Fit");
  WEFT_REQUIRE(o.batch_size > 0, "Model '{}'.Fit: batch_size must be positive, got {}", name_, o.batch_size);
  std::vector<Tensor> xs = xs_in, ys = ys_in;
  PrepareArrays(&xs, &ys, "Fit");
  Tensor vx, vy;
  if (o.validation_x != nullptr) {
    WEFT_REQUIRE(o.validation_y != nullptr, "Model '{}'.Fit: validation_x given without validation_y", name_);
    WEFT_REQUIRE(inputs_.size() == 1 && outputs_.size() == 1, "Model '{}'.Fit: validation arrays need a model with "
                 "one input and one output; pass validation_data as a Dataset", name_);
    std::vector<Tensor> v = {*o.validation_x}, w = {*o.validation_y};
    PrepareArrays(&v, &w, "Fit (validation data)");
    vx = v[0];
    vy = w[0];
    o.validation_x = &vx;
    o.validation_y = &vy;
  }
  if (o.sample_weight != nullptr) {
    WEFT_REQUIRE(o.sample_weight->shape().rank() == 1 && o.sample_weight->shape().dim(0) == xs[0].shape().dim(0),
                 "Model '{}'.Fit: sample_weight has shape {} but x has {} examples ({})", name_,
                 o.sample_weight->shape().ToString(), xs[0].shape().dim(0), xs[0].shape().ToString());
  }
  History h;
  RunEpochs(nullptr, &xs, &ys, o, &h);
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

void Model::RunEpochs(const Dataset* fixed, const std::vector<Tensor>* xs, const std::vector<Tensor>* ys,
                      FitOptions& o, History* h) {
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
      std::vector<Tensor> columns = *xs;
      columns.insert(columns.end(), ys->begin(), ys->end());
      if (o.sample_weight != nullptr) columns.push_back(*o.sample_weight);
      data = Dataset::FromTensors(columns);
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
      std::vector<Tensor> bx, by;
      const Tensor* bw = nullptr;
      SplitElement(batch, &bx, &by, &bw, "Fit");
      if (fixed != nullptr) PrepareArrays(&bx, &by, "Fit");
      const int64_t n = bx[0].shape().dim(0);
      ++pass_steps;
      for (auto& cb : o.callbacks) cb->OnBatchBegin(*this, steps);
      avg.Add({{"loss", TrainStep(bx, by, bw, &totals)}}, n);
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

Logs Model::Evaluate(const Tensor& x, const Tensor& y, int64_t batch_size) {
  return Evaluate(std::vector<Tensor>{x}, std::vector<Tensor>{y}, batch_size);
}

Logs Model::Evaluate(const std::vector<Tensor>& xs_in, const std::vector<Tensor>& ys_in, int64_t batch_size) {
  RequireCompiled("Evaluate");
  WEFT_REQUIRE(batch_size > 0, "Model '{}'.Evaluate: batch_size must be positive, got {}", name_, batch_size);
  std::vector<Tensor> xs = xs_in, ys = ys_in;
  PrepareArrays(&xs, &ys, "Evaluate");
  xs.insert(xs.end(), ys.begin(), ys.end());
  return EvaluateBatches(Dataset::FromTensors(xs).Batch(batch_size));
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
    std::vector<Tensor> bx, by;
    const Tensor* bw = nullptr;
    SplitElement(batch, &bx, &by, &bw, "Evaluate");
    PrepareArrays(&bx, &by, "Evaluate");
    std::vector<std::pair<Output, Tensor>> feeds;
    for (size_t i = 0; i < bx.size(); ++i) feeds.emplace_back(c_->x[i], bx[i]);
    for (size_t i = 0; i < by.size(); ++i) feeds.emplace_back(c_->y[i], by[i]);
    const bool weighted = bw != nullptr;
    if (weighted) {
      const int64_t n = bx[0].shape().dim(0);
      WEFT_REQUIRE(bw->shape().rank() == 1 && bw->shape().dim(0) == n,
                   "Model '{}'.Evaluate: sample_weight has shape {} but the batch has {} examples (x: {})", name_,
                   bw->shape().ToString(), n, bx[0].shape().ToString());
      feeds.emplace_back(c_->eval_sample_weight, CastOnHost(*bw, DType::kFloat32, "sample_weight"));
    }
    // A local step: each worker evaluates on its own (its metrics are not all-reduced).
    std::vector<Tensor> out = session_->Run(feeds, weighted ? weighted_fetches : fetches, {},
                                            RunOptions{.collective = false});
    avg.Add({{"loss", out[0].scalar<float>()()}}, bx[0].shape().dim(0));
    totals.Add(std::vector<Tensor>(out.begin() + 1, out.end()));
  }
  // A mean over no batch is no number (Keras raises ValueError for empty data).
  WEFT_REQUIRE(batches > 0, "Model '{}'.Evaluate: the data gave no batch (0 samples): nothing to evaluate", name_);
  Logs logs = totals.Results();
  logs["loss"] = avg.Mean()["loss"];
  return logs;
}

Tensor Model::Predict(const Tensor& x, int64_t batch_size) {
  RequireCompiled("Predict");
  WEFT_REQUIRE(outputs_.size() == 1, "Model '{}'.Predict: the model has {} outputs; use PredictAll", name_,
               outputs_.size());
  return PredictAll(std::vector<Tensor>{x}, batch_size)[0];
}

Tensor Model::Predict(const Dataset& data) {
  RequireCompiled("Predict");
  WEFT_REQUIRE(outputs_.size() == 1, "Model '{}'.Predict: the model has {} outputs; use PredictAll", name_,
               outputs_.size());
  return PredictAll(data)[0];
}

std::vector<Tensor> Model::PredictAll(const std::vector<Tensor>& xs_in, int64_t batch_size) {
  RequireCompiled("Predict");
  WEFT_REQUIRE(batch_size > 0, "Model '{}'.Predict: batch_size must be positive, got {}", name_, batch_size);
  std::vector<Tensor> xs = xs_in;
  PrepareArrays(&xs, nullptr, "Predict");
  return PredictBatches(Dataset::FromTensors(xs).Batch(batch_size), /*prepared=*/true);
}

std::vector<Tensor> Model::PredictAll(const Dataset& data) {
  RequireCompiled("Predict");
  WEFT_REQUIRE(data.Cardinality() != data::kInfiniteCardinality, "Model '{}'.Predict: the dataset is infinite ({}); "
               "take a finite part (steps)", name_, data.DebugString());
  return PredictBatches(data, /*prepared=*/false);
}

// Runs the inference pass on every batch (its first num_inputs components; others, e.g. labels,
// are ignored) and joins each output's batches along dim 0.
std::vector<Tensor> Model::PredictBatches(const Dataset& data, bool prepared) {
  std::unique_ptr<Iterator> it = data.Prefetch(2).MakeIterator();
  const size_t k = inputs_.size();
  std::vector<std::vector<Tensor>> outs(outputs_.size());
  int64_t rows = 0;
  Element batch;
  while (it->Next(&batch)) {
    WEFT_REQUIRE(batch.size() >= k, "Model '{}'.Predict: a dataset element has {} components but the model has {} "
                 "input(s)", name_, batch.size(), k);
    std::vector<Tensor> bx(batch.begin(), batch.begin() + static_cast<std::ptrdiff_t>(k));
    if (!prepared) PrepareArrays(&bx, nullptr, "Predict");
    std::vector<std::pair<Output, Tensor>> feeds;
    for (size_t i = 0; i < k; ++i) feeds.emplace_back(c_->x[i], bx[i]);
    std::vector<Tensor> out = session_->Run(feeds, c_->pred);
    for (size_t i = 0; i < out.size(); ++i) outs[i].push_back(std::move(out[i]));
    rows += bx[0].shape().dim(0);
  }
  std::vector<Tensor> result;
  for (size_t o = 0; o < outs.size(); ++o) {
    std::vector<int64_t> dims = {rows};
    const TensorShape& shape = outputs_[o]->shape;
    for (int i = 1; i < shape.rank(); ++i) dims.push_back(shape.dim(i));
    // A dim the shapes leave unknown (steps of a variable-length sequence) comes from the batches.
    for (int i = 1; i < shape.rank() && !outs[o].empty(); ++i) {
      if (dims[static_cast<size_t>(i)] < 0) dims[static_cast<size_t>(i)] = outs[o][0].shape().dim(i);
    }
    Tensor t(DType::kFloat32, TensorShape(dims));
    char* dst = static_cast<char*>(t.raw_data());
    for (const Tensor& part : outs[o]) {
      bool same = part.shape().rank() == static_cast<int>(dims.size());
      for (size_t i = 1; same && i < dims.size(); ++i) same = part.shape().dim(static_cast<int>(i)) == dims[i];
      WEFT_REQUIRE(same, "Model '{}'.Predict: output {} has shape {} in one batch but {} in the first", name_, o,
                   part.shape().ToString(), outs[o][0].shape().ToString());
      std::memcpy(dst, part.raw_data(), part.bytes());
      dst += part.bytes();
    }
    result.push_back(std::move(t));
  }
  return result;
}

}  // namespace weft::train
