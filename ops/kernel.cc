#include "ops/kernel.h"

#include <fmt/format.h>

#include <condition_variable>

namespace weft {

Var* VarStore::LookupOrCreate(const std::string& name) {
  std::lock_guard<std::mutex> l(mu_);
  auto& v = vars_[name];
  if (!v) v = std::make_unique<Var>();
  return v.get();
}

Var* VarStore::Find(const std::string& name) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = vars_.find(name);
  return it == vars_.end() ? nullptr : it->second.get();
}

std::vector<std::string> VarStore::Names() const {
  std::lock_guard<std::mutex> l(mu_);
  std::vector<std::string> names;
  for (const auto& [n, v] : vars_) names.push_back(n);
  return names;
}

OpKernelContext::OpKernelContext(const Node& node, const DeviceContext& device, std::vector<Tensor> inputs,
                                 int64_t step_id, CallFrame* frame, Rendezvous* rendezvous,
                                 CancellationManager* cancellation, CollectiveContext* collectives)
    : node_(node),
      device_(device),
      inputs_(std::move(inputs)),
      outputs_(node.num_outputs()),
      step_id_(step_id),
      frame_(frame),
      rendezvous_(rendezvous),
      cancellation_(cancellation),
      collectives_(collectives) {}

Var* OpKernelContext::var(int i) const {
  const Output& src = node_.input(i);
  WEFT_REQUIRE(node_.def().inputs.at(i).is_ref, "input {} of {} is not a ref input", i, node_.Describe());
  WEFT_REQUIRE(device_.vars != nullptr, "{}: no variable store on this device", node_.Describe());
  const std::string shared = src.node->has_attr("shared_name") ? src.node->attr<std::string>("shared_name") : "";
  return device_.vars->LookupOrCreate(shared.empty() ? src.node->name() : shared);
}

Tensor* OpKernelContext::allocate_output(int i, TensorShape shape) {
  WEFT_REQUIRE(i >= 0 && i < node_.num_outputs(), "{}: output {} out of range", node_.Describe(), i);
  outputs_[i] = Tensor(node_.output_dtype(i), std::move(shape), device_.allocator);
  return &outputs_[i];
}

void OpKernelContext::set_output(int i, Tensor t) {
  WEFT_REQUIRE(i >= 0 && i < node_.num_outputs(), "{}: output {} out of range", node_.Describe(), i);
  if (t.dtype() != node_.output_dtype(i)) {
    throw Error(errors::Internal("{}: output {} set to {} but the op declares {}", node_.Describe(), i,
                                 t.DebugString(), DTypeName(node_.output_dtype(i))));
  }
  outputs_[i] = std::move(t);
}

void AsyncOpKernel::Compute(OpKernelContext* ctx) {
  std::mutex mu;
  std::condition_variable cv;
  bool finished = false;
  Status status;
  ComputeAsync(ctx, [&](Status s) {
    std::lock_guard<std::mutex> l(mu);
    status = std::move(s);
    finished = true;
    cv.notify_all();
  });
  std::unique_lock<std::mutex> l(mu);
  cv.wait(l, [&] { return finished; });
  ThrowIfError(status);
}

void KernelRegistry::Register(std::string op, std::string device_type, std::string type_attr, DType dtype,
                              KernelFactory f) {
  kernels_[op].push_back({std::move(device_type), std::move(type_attr), dtype, std::move(f)});
}

const KernelRegistry::Entry* KernelRegistry::Find(const Node& node, std::string_view device_type) const {
  auto it = kernels_.find(node.op());
  if (it == kernels_.end()) return nullptr;
  for (const Entry& e : it->second) {
    if (e.device_type != device_type) continue;
    if (e.dtype == DType::kInvalid) return &e;
    if (node.has_attr(e.type_attr) && node.attr<DType>(e.type_attr) == e.dtype) return &e;
  }
  return nullptr;
}

bool KernelRegistry::HasKernel(const Node& node, std::string_view device_type) const {
  return Find(node, device_type) != nullptr;
}

std::string KernelRegistry::KernelsFor(std::string_view op) const {
  auto it = kernels_.find(op);
  if (it == kernels_.end()) return "none";
  std::map<std::string, std::vector<std::string>> by_device;
  for (const Entry& e : it->second) {
    by_device[e.device_type].push_back(e.dtype == DType::kInvalid ? std::string("any")
                                                                  : fmt::format("{}={}", e.type_attr, DTypeName(e.dtype)));
  }
  std::vector<std::string> parts;
  for (auto& [d, ts] : by_device) parts.push_back(fmt::format("{}: {}", d, fmt::join(ts, ", ")));
  return fmt::format("{}", fmt::join(parts, "; "));
}

std::unique_ptr<OpKernel> KernelRegistry::Create(const Node& node, std::string_view device_type) const {
  const Entry* e = Find(node, device_type);
  if (e == nullptr) {
    std::string types;
    for (const auto& [k, v] : node.attrs()) {
      if (const DType* t = std::get_if<DType>(&v)) types += fmt::format(" {}={}", k, DTypeName(*t));
    }
    throw Error(errors::NotFound("no {} kernel for {} with{} (kernels: {})", device_type, node.Describe(),
                                 types.empty() ? " no type attrs" : types, KernelsFor(node.op())));
  }
  return e->factory(node);
}

}  // namespace weft
