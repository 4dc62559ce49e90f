#include "nn/module.h"

#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/error.h"
#include "tensor/ops.h"

namespace ts::nn {
namespace {

std::string prefixed(const std::string& prefix, const std::string& name) { return absl::StrCat(prefix, ".", name); }

}  // namespace

void Module::check_new_name(const std::string& name) const {
  if (name.empty() || name.find('.') != std::string::npos) {
    throw_error(absl::StatusCode::kInternal, type_name_, ": invalid name '", name, "' (empty or dotted)");
  }
  auto taken = [&name](const auto& entries) {
    for (const auto& entry : entries) {
      if (entry.first == name) return true;
    }
    return false;
  };
  if (taken(params_) || taken(buffers_) || taken(children_)) {
    throw_error(absl::StatusCode::kInternal, type_name_, ": name '", name, "' registered twice");
  }
}

Variable Module::register_parameter(std::string name, Tensor value, bool requires_grad) {
  check_new_name(name);
  Variable v(std::move(value), requires_grad);
  v.set_name(name);
  params_.emplace_back(std::move(name), v);
  return v;
}

void Module::register_buffer(std::string name, Tensor value) {
  check_new_name(name);
  buffers_.emplace_back(std::move(name), std::move(value));
}

void Module::add_child(std::string name, std::shared_ptr<Module> child) {
  check_new_name(name);
  TS_CHECK_CODE(absl::StatusCode::kInternal, child != nullptr, type_name_, ": child '", name, "' is null");
  children_.emplace_back(std::move(name), std::move(child));
}

const Variable& Module::param(absl::string_view name) const {
  for (const auto& [n, v] : params_) {
    if (n == name) return v;
  }
  throw_error(absl::StatusCode::kInternal, type_name_, " has no parameter '", name, "'");
}

bool Module::has_param(absl::string_view name) const {
  for (const auto& entry : params_) {
    if (entry.first == name) return true;
  }
  return false;
}

const Tensor& Module::buffer(absl::string_view name) const {
  for (const auto& [n, t] : buffers_) {
    if (n == name) return t;
  }
  throw_error(absl::StatusCode::kInternal, type_name_, " has no buffer '", name, "'");
}

std::vector<std::pair<std::string, Variable>> Module::named_parameters() const {
  std::vector<std::pair<std::string, Variable>> out;
  // A tied parameter (set_parameter) is listed once, under its first name, as
  // PyTorch's named_parameters does: an optimizer or DDP given it twice would
  // step or reduce it twice. state_dict keeps every name.
  std::set<const void*> seen;
  const auto add = [&](std::string name, Variable v) {
    if (seen.insert(v.id()).second) out.emplace_back(std::move(name), std::move(v));
  };
  for (const auto& [name, v] : params_) add(name, v);
  for (const auto& [child_name, child] : children_) {
    for (auto& [name, v] : child->named_parameters()) add(prefixed(child_name, name), std::move(v));
  }
  return out;
}

std::vector<Variable> Module::parameters() const {
  std::vector<Variable> out;
  for (auto& [name, v] : named_parameters()) out.push_back(std::move(v));
  return out;
}

NamedTensors Module::named_buffers() const {
  NamedTensors out(buffers_.begin(), buffers_.end());
  for (const auto& [child_name, child] : children_) {
    for (auto& [name, t] : child->named_buffers()) {
      out.emplace_back(prefixed(child_name, name), std::move(t));
    }
  }
  return out;
}

std::vector<std::pair<std::string, std::shared_ptr<Module>>> Module::named_modules() const {
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> out;
  for (const auto& [child_name, child] : children_) {
    out.emplace_back(child_name, child);
    for (auto& [name, m] : child->named_modules()) {
      out.emplace_back(prefixed(child_name, name), std::move(m));
    }
  }
  return out;
}

int64_t Module::num_parameters() const {
  int64_t n = 0;
  for (const auto& [name, v] : named_parameters()) n += v.numel();
  return n;
}

NamedTensors Module::state_dict() const {
  NamedTensors out;
  for (const auto& [name, v] : params_) out.emplace_back(name, v.data());
  for (const auto& [name, t] : buffers_) out.emplace_back(name, t);
  for (const auto& [child_name, child] : children_) {
    for (auto& [name, t] : child->state_dict()) {
      out.emplace_back(prefixed(child_name, name), std::move(t));
    }
  }
  return out;
}

absl::Status Module::load_state_dict(const NamedTensors& state) {
  const NamedTensors own = state_dict();
  std::map<std::string, const Tensor*> given;
  for (const auto& [name, t] : state) {
    if (!given.emplace(name, &t).second) {
      return absl::InvalidArgumentError(absl::StrCat("load_state_dict: entry '", name, "' appears twice"));
    }
  }
  // Validate everything first, so a failed load leaves the module untouched.
  std::vector<std::string> missing;
  std::vector<std::pair<Tensor, const Tensor*>> copies;  // (destination, source)
  for (const auto& [name, target] : own) {
    auto it = given.find(name);
    if (it == given.end()) {
      missing.push_back(name);
      continue;
    }
    const Tensor& src = *it->second;
    if (src.shape() != target.shape()) {
      return absl::InvalidArgumentError(absl::StrCat("load_state_dict: entry '", name, "' has shape ",
                                                     shape_str(src.shape()), ", the model's is ",
                                                     shape_str(target.shape())));
    }
    if (src.dtype() != target.dtype()) {
      return absl::InvalidArgumentError(absl::StrCat("load_state_dict: entry '", name, "' has dtype ",
                                                     dtype_name(src.dtype()), ", the model's is ",
                                                     dtype_name(target.dtype())));
    }
    copies.emplace_back(target, &src);
    given.erase(it);
  }
  if (!missing.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("load_state_dict: missing ",
                                                   missing.size() == 1 ? "entry" : "entries", " '",
                                                   absl::StrJoin(missing, "', '"), "'"));
  }
  if (!given.empty()) {
    std::vector<std::string> unexpected;
    for (const auto& [name, t] : given) unexpected.push_back(name);
    return absl::InvalidArgumentError(absl::StrCat("load_state_dict: unexpected ",
                                                   unexpected.size() == 1 ? "entry" : "entries", " '",
                                                   absl::StrJoin(unexpected, "', '"), "' (not in the model)"));
  }
  // Validated above: a copy failing now (out of device memory) is an Error of
  // the op surface, returned as this Status.
  return capture([&] {
    for (const auto& [dst, src] : copies) copy_(dst, *src);
  });
}

void Module::train(bool on) {
  training_ = on;
  for (const auto& [name, child] : children_) child->train(on);
}

template <typename F>
void Module::for_each_tensor_slot(F&& f, const ModuleFilter& selected) {
  if (!selected || selected(*this)) {
    for (auto& [name, v] : params_) {
      Tensor data = f(v.data());
      if (v.grad().defined()) v.set_grad(f(v.grad()));
      v.set_data(std::move(data));
    }
    for (auto& [name, t] : buffers_) t = f(t);
  }
  for (auto& [name, child] : children_) child->for_each_tensor_slot(f, selected);
}

void Module::to(Device device) {
  for_each_tensor_slot([device](const Tensor& t) { return ts::to(t, device); }, nullptr);
  notify_placement_changed();
}

void Module::to(DType dtype, const ModuleFilter& selected) {
  for_each_tensor_slot([dtype](const Tensor& t) { return is_floating(t.dtype()) ? ts::to(t, dtype) : t; }, selected);
  notify_placement_changed();
}

void Module::notify_placement_changed() {
  placement_changed();
  for (auto& [name, child] : children_) child->notify_placement_changed();
}

void Module::zero_grad() {
  for (auto& [name, v] : named_parameters()) v.clear_grad();
}

void Module::set_parameter(absl::string_view name, Variable value) {
  for (auto& [n, v] : params_) {
    if (n != name) continue;
    TS_CHECK(
        value.defined() && value.shape() == v.shape() && value.dtype() == v.dtype() && value.device() == v.device(),
        type_name_, ".set_parameter('", name, "'): needs ", v.data().describe(), ", got ",
        value.defined() ? value.data().describe() : "an undefined Variable");
    v = std::move(value);
    return;
  }
  throw_error(absl::StatusCode::kNotFound, type_name_, ".set_parameter: no parameter '", name, "'");
}

}  // namespace ts::nn
