#include "tasks/common/config.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/files.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"

namespace ts::tasks {
namespace {

namespace pb = ::google::protobuf;

// Gathers protoc's parse errors as "name:line:column: message" (1-based).
class ErrorList : public pb::io::ErrorCollector {
 public:
  // `first_line_offset`: characters before the text of interest on its first
  // line (a value parsed behind its field's name), left out of the columns.
  explicit ErrorList(absl::string_view name, int first_line_offset = 0)
      : name_(name), first_line_offset_(first_line_offset) {}
  void AddError(int line, pb::io::ColumnNumber column, const std::string& message) override {
    if (line == 0) column = std::max(0, column - first_line_offset_);
    errors_.push_back(absl::StrCat(name_, ":", line + 1, ":", column + 1, ": ", message));
  }
  void AddWarning(int line, pb::io::ColumnNumber column, const std::string& message) override {
    AddError(line, column, message);  // a deprecated field is worth stopping for, too
  }
  std::string joined() const { return absl::StrJoin(errors_, "\n"); }

 private:
  std::string name_;
  int first_line_offset_;
  std::vector<std::string> errors_;
};

// Why `value` does not parse for `field`, in the user's terms: the names an
// enum takes, the type a scalar wants; for a message or a list,
// the text parser's errors (their columns count from the value's start).
std::string why_not(const pb::FieldDescriptor* field, absl::string_view value, const ErrorList& errors) {
  if (field->is_repeated() || field->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE ||
      field->cpp_type() == pb::FieldDescriptor::CPPTYPE_STRING) {
    return errors.joined();
  }
  if (field->cpp_type() == pb::FieldDescriptor::CPPTYPE_ENUM) {
    std::vector<std::string> names;
    for (int i = 0; i < field->enum_type()->value_count(); ++i) names.push_back(field->enum_type()->value(i)->name());
    return absl::StrCat("'", value, "' is not one of ", absl::StrJoin(names, ", "));
  }
  if (field->cpp_type() == pb::FieldDescriptor::CPPTYPE_BOOL) {
    return absl::StrCat("'", value, "' is not true or false");
  }
  return absl::StrCat("'", value, "' is not a valid ", field->type_name());  // not a number, or out of range
}

// An extension of `message`'s type named by its full name or its short name.
const pb::FieldDescriptor* find_extension(const pb::Descriptor* type, absl::string_view name) {
  std::vector<const pb::FieldDescriptor*> extensions;
  pb::DescriptorPool::generated_pool()->FindAllExtensions(type, &extensions);
  for (const auto* e : extensions) {
    if (e->full_name() == name || e->name() == name) return e;
  }
  return nullptr;
}

// Splits "a.b", "[pkg.ext].c" into {"a", "b"}, {"pkg.ext", "c"}.
absl::StatusOr<std::vector<std::string>> split_path(absl::string_view path) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i < path.size()) {
    if (path[i] == '[') {
      const size_t close = path.find(']', i);
      if (close == absl::string_view::npos)
        return absl::InvalidArgumentError(absl::StrCat("unclosed '[' in field path '", path, "'"));
      parts.emplace_back(path.substr(i + 1, close - i - 1));
      i = close + 1;
      if (i < path.size() && path[i] != '.')
        return absl::InvalidArgumentError(absl::StrCat("expected '.' after ']' in field path '", path, "'"));
      ++i;
    } else {
      size_t dot = path.find('.', i);
      if (dot == absl::string_view::npos) dot = path.size();
      parts.emplace_back(path.substr(i, dot - i));
      i = dot + 1;
    }
  }
  if (parts.empty() || path.back() == '.' ||
      std::any_of(parts.begin(), parts.end(), [](const auto& p) { return p.empty(); })) {
    return absl::InvalidArgumentError(absl::StrCat("empty field name in '", path, "'"));
  }
  return parts;
}

// The text-format name of a field inside its message ("lr", "[pkg.ext]").
std::string text_name(const pb::FieldDescriptor* f) {
  return f->is_extension() ? absl::StrCat("[", f->full_name(), "]") : f->name();
}

// A string value as written on a command line: quoted text-format syntax is
// taken as is, anything else is the literal string.
std::string string_literal(absl::string_view value) {
  if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front()) {
    return std::string(value);
  }
  return absl::StrCat("\"", absl::CEscape(value), "\"");
}

Json field_value_json(const pb::Message& m, const pb::FieldDescriptor* f, int index);

// A field's value, a list for a repeated one; an unset singular field shows
// its default.
Json field_json(const pb::Message& m, const pb::FieldDescriptor* f) {
  if (!f->is_repeated()) return field_value_json(m, f, -1);
  Json list = Json::array();
  for (int k = 0; k < m.GetReflection()->FieldSize(m, f); ++k) list.push_back(field_value_json(m, f, k));
  return list;
}

Json message_json(const pb::Message& m) {
  Json out = Json::object();
  const pb::Descriptor* d = m.GetDescriptor();
  const pb::Reflection* r = m.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const pb::FieldDescriptor* f = d->field(i);
    // Of a oneof, only the member the config chose (an SGD run has no adam).
    if (f->real_containing_oneof() != nullptr && !r->HasField(m, f)) continue;
    out[f->name()] = field_json(m, f);
  }
  // Extensions appear only when set; they are the task's own settings.
  std::vector<const pb::FieldDescriptor*> set;
  r->ListFields(m, &set);
  for (const auto* f : set) {
    if (f->is_extension()) out[text_name(f)] = field_json(m, f);
  }
  return out;
}

// index < 0: a singular field.
Json field_value_json(const pb::Message& m, const pb::FieldDescriptor* f, int index) {
  const pb::Reflection* r = m.GetReflection();
  const bool rep = index >= 0;
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_INT32:
      return rep ? r->GetRepeatedInt32(m, f, index) : r->GetInt32(m, f);
    case pb::FieldDescriptor::CPPTYPE_INT64:
      return rep ? r->GetRepeatedInt64(m, f, index) : r->GetInt64(m, f);
    case pb::FieldDescriptor::CPPTYPE_UINT32:
      return rep ? r->GetRepeatedUInt32(m, f, index) : r->GetUInt32(m, f);
    case pb::FieldDescriptor::CPPTYPE_UINT64: {
      const uint64_t v = rep ? r->GetRepeatedUInt64(m, f, index) : r->GetUInt64(m, f);
      // Beyond int64, keep the exact digits as a string rather than wrap.
      if (v > static_cast<uint64_t>(INT64_MAX)) return Json(std::to_string(v));
      return Json(static_cast<int64_t>(v));
    }
    case pb::FieldDescriptor::CPPTYPE_DOUBLE:
      return rep ? r->GetRepeatedDouble(m, f, index) : r->GetDouble(m, f);
    case pb::FieldDescriptor::CPPTYPE_FLOAT:
      return static_cast<double>(rep ? r->GetRepeatedFloat(m, f, index) : r->GetFloat(m, f));
    case pb::FieldDescriptor::CPPTYPE_BOOL:
      return rep ? r->GetRepeatedBool(m, f, index) : r->GetBool(m, f);
    case pb::FieldDescriptor::CPPTYPE_ENUM:
      return (rep ? r->GetRepeatedEnum(m, f, index) : r->GetEnum(m, f))->name();
    case pb::FieldDescriptor::CPPTYPE_STRING: {
      const std::string s = rep ? r->GetRepeatedString(m, f, index) : r->GetString(m, f);
      return f->type() == pb::FieldDescriptor::TYPE_BYTES ? Json(absl::Base64Escape(s)) : Json(s);
    }
    case pb::FieldDescriptor::CPPTYPE_MESSAGE:
      return message_json(rep ? r->GetRepeatedMessage(m, f, index) : r->GetMessage(m, f));
  }
  return Json();
}

}  // namespace

absl::StatusOr<TaskConfig> parse_config(absl::string_view text, absl::string_view name) {
  TaskConfig config;
  ErrorList errors(name);
  pb::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(std::string(text), &config)) {
    return absl::InvalidArgumentError(absl::StrCat("bad config: ", errors.joined()));
  }
  return config;
}

absl::StatusOr<TaskConfig> load_config(const std::string& path) {
  absl::StatusOr<std::string> text = read_file(path);
  if (!text.ok()) return absl::Status(text.status().code(), absl::StrCat("config: ", text.status().message()));
  return parse_config(*text, path);
}

namespace {

// The optimizer message a short name like "lr" refers to: the chosen one, or
// SGD (the default) when the config chooses none.
const pb::FieldDescriptor* chosen_optimizer(const TaskConfig& config) {
  const pb::OneofDescriptor* oneof = TaskConfig::descriptor()->FindOneofByName("optimizer");
  const pb::FieldDescriptor* chosen = config.GetReflection()->GetOneofFieldDescriptor(config, oneof);
  return chosen != nullptr ? chosen : TaskConfig::descriptor()->FindFieldByName("sgd");
}

// A field name that is not TaskConfig's own, resolved to the path of the
// field of that name in the chosen optimizer's message or in one of the
// task's extension messages linked into the binary ("lr" -> "sgd.lr",
// "dataset" -> "[ts.tasks.resnet20].dataset"). Empty when no field has that
// name; an error when several do.
absl::StatusOr<std::string> resolve_short_name(const TaskConfig& config, const std::string& name) {
  std::vector<std::string> candidates;
  const pb::FieldDescriptor* optimizer = chosen_optimizer(config);
  if (optimizer->message_type()->FindFieldByName(name) != nullptr) {
    candidates.push_back(absl::StrCat(optimizer->name(), ".", name));
  }
  std::vector<const pb::FieldDescriptor*> extensions;
  pb::DescriptorPool::generated_pool()->FindAllExtensions(TaskConfig::descriptor(), &extensions);
  for (const pb::FieldDescriptor* e : extensions) {
    if (e->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE && e->message_type()->FindFieldByName(name) != nullptr) {
      candidates.push_back(absl::StrCat("[", e->full_name(), "].", name));
    }
  }
  if (candidates.size() > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "config field '", name, "' is ambiguous: ", absl::StrJoin(candidates, " or "), "; give the full path"));
  }
  return candidates.empty() ? std::string() : candidates[0];
}

}  // namespace

double configured_lr(const TaskConfig& config) {
  const pb::FieldDescriptor* optimizer = chosen_optimizer(config);
  const pb::Message& settings = config.GetReflection()->GetMessage(config, optimizer);
  const pb::FieldDescriptor* lr = optimizer->message_type()->FindFieldByName("lr");
  return settings.GetReflection()->GetDouble(settings, lr);
}

absl::Status set_config_field(TaskConfig& config, absl::string_view path, absl::string_view value) {
  absl::StatusOr<std::vector<std::string>> parts = split_path(path);
  if (!parts.ok()) return parts.status();
  if (parts->size() == 1 && TaskConfig::descriptor()->FindFieldByName((*parts)[0]) == nullptr &&
      find_extension(TaskConfig::descriptor(), (*parts)[0]) == nullptr) {
    absl::StatusOr<std::string> full = resolve_short_name(config, (*parts)[0]);
    if (!full.ok()) return full.status();
    if (!full->empty()) return set_config_field(config, *full, value);
  }
  pb::Message* message = &config;
  const pb::FieldDescriptor* field = nullptr;
  for (size_t i = 0; i < parts->size(); ++i) {
    const std::string& part = (*parts)[i];
    const pb::Descriptor* type = message->GetDescriptor();
    field = type->FindFieldByName(part);
    if (field == nullptr) field = find_extension(type, part);
    if (field == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("unknown config field '", part, "' (in '", path, "'; ",
                                                     type->full_name(), " has no such field)"));
    }
    if (i + 1 == parts->size()) break;
    if (field->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE || field->is_repeated()) {
      return absl::InvalidArgumentError(
          absl::StrCat("config field '", part, "' in '", path, "' is not a singular message, so it has no subfields"));
    }
    // Stepping into one choice of a oneof would clear the chosen one: a
    // tweak of SGD's momentum would silently swap a configured Adam for SGD
    // at SGD's defaults. Switching takes the whole message (sgd={lr: 0.1}).
    if (const pb::OneofDescriptor* oneof = field->containing_oneof(); oneof != nullptr) {
      const pb::FieldDescriptor* chosen = message->GetReflection()->GetOneofFieldDescriptor(*message, oneof);
      if (chosen != nullptr && chosen != field) {
        return absl::InvalidArgumentError(
            absl::StrCat("config field '", path, "': the config chooses '", chosen->name(), "' for '", oneof->name(),
                         "', so setting a field of '", part,
                         "' would drop it; to switch, give the whole message: --set='", part, "={...}'"));
      }
    }
    message = message->GetReflection()->MutableMessage(message, field);
  }

  // The containing message parses "name: value" text, so every scalar type,
  // enum names, extensions and lists use text-format rules.
  const std::string literal = field->cpp_type() == pb::FieldDescriptor::CPPTYPE_STRING && !field->is_repeated()
                                  ? string_literal(value)
                                  : std::string(value);
  const std::string text = field->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE
                               ? absl::StrCat(text_name(field), " ", literal)
                               : absl::StrCat(text_name(field), ": ", literal);
  std::unique_ptr<pb::Message> scratch(message->New());
  ErrorList errors(absl::StrCat("value '", value, "'"), static_cast<int>(text.size() - literal.size()));
  pb::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  if (field->is_repeated() && (value.empty() || value.front() != '[')) {
    return absl::InvalidArgumentError(
        absl::StrCat("config field '", path, "' is repeated: give a list like [a, b], got '", value, "'"));
  }
  if (!parser.ParseFromString(text, scratch.get())) {
    return absl::InvalidArgumentError(absl::StrCat("bad value for config field '", path, "' (", field->type_name(),
                                                   "): ", why_not(field, value, errors)));
  }
  // The value is parsed as text of the containing message: "3 batch_size: 7"
  // would set a second field.
  std::vector<const pb::FieldDescriptor*> parsed;
  scratch->GetReflection()->ListFields(*scratch, &parsed);
  if (parsed.size() > 1) {
    return absl::InvalidArgumentError(absl::StrCat("bad value for config field '", path, "': '", value,
                                                   "' sets other fields too (one field per assignment)"));
  }
  // A list replaces the configured one; a message merges into it.
  if (field->is_repeated()) message->GetReflection()->ClearField(message, field);
  message->MergeFrom(*scratch);
  return absl::OkStatus();
}

absl::Status apply_overrides(TaskConfig& config, absl::string_view assignments) {
  std::vector<std::string> items;
  std::string current;
  int depth = 0;
  char quote = 0;
  bool escaped = false;  // the character before was a backslash in a quote
  for (const char c : assignments) {
    if (quote) {
      // Text format's escapes: \" inside "..." does not close it.
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == quote) {
        quote = 0;
      }
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if (c == ']' || c == '}') {
      if (--depth < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("--set: '", std::string(1, c), "' closes nothing in '", assignments, "'"));
      }
    } else if (c == ',' && depth == 0) {
      items.push_back(std::move(current));
      current.clear();
      continue;
    }
    current += c;
  }
  // Left open, a quote or bracket would have swallowed the assignments after
  // it into one value.
  if (quote != 0) {
    return absl::InvalidArgumentError(absl::StrCat("--set: unclosed ", std::string(1, quote), " in '", assignments,
                                                   "' (quote a value holding one: path=\"/data/bob's\")"));
  }
  if (depth != 0) {
    return absl::InvalidArgumentError(absl::StrCat("--set: unclosed '[' or '{' in '", assignments, "'"));
  }
  items.push_back(std::move(current));
  for (const std::string& item : items) {
    const absl::string_view trimmed = absl::StripAsciiWhitespace(item);
    if (trimmed.empty()) continue;
    const size_t eq = trimmed.find('=');
    if (eq == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat("--set: expected field=value, got '", trimmed, "'"));
    }
    absl::Status s = set_config_field(config, absl::StripAsciiWhitespace(trimmed.substr(0, eq)),
                                      absl::StripAsciiWhitespace(trimmed.substr(eq + 1)));
    if (!s.ok()) return absl::InvalidArgumentError(absl::StrCat("--set: ", s.message()));
  }
  return absl::OkStatus();
}

absl::Status validate_config(const TaskConfig& c) {
  std::vector<std::string> problems;
  const auto need = [&](bool ok, absl::string_view field, auto value, absl::string_view rule) {
    if (!ok) problems.push_back(absl::StrCat(field, " = ", value, " (", rule, ")"));
  };
  need(c.epochs() >= 1, "epochs", c.epochs(), "must be >= 1");
  need(c.max_steps() >= 0, "max_steps", c.max_steps(), "must be >= 0; 0 means no limit");
  need(c.batch_size() >= 1, "batch_size", c.batch_size(), "must be >= 1");
  need(!c.output_dir().empty(), "output_dir", "\"\"", "must name the folder for report.json");
  need(c.gradient_accumulation_steps() >= 1, "gradient_accumulation_steps", c.gradient_accumulation_steps(),
       "must be >= 1");
  need(std::isfinite(c.grad_clip_norm()) && c.grad_clip_norm() >= 0, "grad_clip_norm", c.grad_clip_norm(),
       "must be finite and >= 0; 0 means no clipping");
  if (c.has_sgd()) {
    const SgdConfig& sgd = c.sgd();
    need(std::isfinite(sgd.lr()) && sgd.lr() >= 0, "sgd.lr", sgd.lr(), "must be finite and >= 0");
    need(sgd.momentum() >= 0 && sgd.momentum() < 1, "sgd.momentum", sgd.momentum(), "must be in [0, 1)");
    need(!sgd.nesterov() || (sgd.momentum() > 0 && sgd.dampening() == 0), "sgd.nesterov", "true",
         "needs momentum > 0 and dampening 0");
    need(std::isfinite(sgd.weight_decay()) && sgd.weight_decay() >= 0, "sgd.weight_decay", sgd.weight_decay(),
         "must be finite and >= 0");
    need(sgd.dampening() >= 0 && sgd.dampening() <= 1, "sgd.dampening", sgd.dampening(), "must be in [0, 1]");
    need(sgd.nt_asgd_nonmono() >= 0, "sgd.nt_asgd_nonmono", sgd.nt_asgd_nonmono(), "must be >= 0; 0 means plain SGD");
    // Averaged SGD, once NT-ASGD switches to it, has no momentum: a
    // momentum set here would silently stop mid-run.
    need(sgd.nt_asgd_nonmono() == 0 || sgd.momentum() == 0, "sgd.momentum", sgd.momentum(),
         "must be 0 with nt_asgd_nonmono: the averaged SGD it switches to has none");
  }
  if (c.has_adam()) {
    const AdamConfig& adam = c.adam();
    need(std::isfinite(adam.lr()) && adam.lr() >= 0, "adam.lr", adam.lr(), "must be finite and >= 0");
    need(adam.beta1() >= 0 && adam.beta1() < 1, "adam.beta1", adam.beta1(), "must be in [0, 1)");
    need(adam.beta2() >= 0 && adam.beta2() < 1, "adam.beta2", adam.beta2(), "must be in [0, 1)");
    need(std::isfinite(adam.eps()) && adam.eps() >= 0, "adam.eps", adam.eps(), "must be finite and >= 0");
    need(std::isfinite(adam.weight_decay()) && adam.weight_decay() >= 0, "adam.weight_decay", adam.weight_decay(),
         "must be finite and >= 0");
  }
  // Bounded: an infinite or huge count, cast to an integer of epochs, is
  // undefined behaviour.
  need(c.warmup_epochs() >= 0 && c.warmup_epochs() <= 1e6 && c.warmup_epochs() == std::floor(c.warmup_epochs()),
       "warmup_epochs", c.warmup_epochs(), "must be a whole number of epochs in [0, 1e6]");
  need(c.lr_decay_factor() > 0 && c.lr_decay_factor() <= 1, "lr_decay_factor", c.lr_decay_factor(),
       "must be in (0, 1]");
  need(c.lr_step_epochs() >= 1, "lr_step_epochs", c.lr_step_epochs(), "must be >= 1");
  need(c.lr_patience() >= 0, "lr_patience", c.lr_patience(), "must be >= 0");
  need(c.lr_min() >= 0 && c.lr_min() <= configured_lr(c), "lr_min", c.lr_min(), "must be in [0, lr]");
  need(std::isfinite(c.lr_plateau_threshold()) && c.lr_plateau_threshold() >= 0, "lr_plateau_threshold",
       c.lr_plateau_threshold(), "must be finite and >= 0");
  need(!(c.lr_warmup_per_step() && c.lr_schedule() == TaskConfig::PLATEAU), "lr_warmup_per_step", "true",
       "does not go with lr_schedule PLATEAU (its warm-up is MLBench's, once per epoch)");
  // The plateau schedule steps on each evaluation's loss: evaluated every
  // N epochs, its warm-up and patience would count evaluations, not epochs.
  need(c.eval_every_epochs() == 1 || c.lr_schedule() != TaskConfig::PLATEAU, "eval_every_epochs", c.eval_every_epochs(),
       "must be 1 with lr_schedule PLATEAU, which steps on every epoch's validation loss");
  need(c.lr_decay_factor() < 1 || c.lr_schedule() != TaskConfig::PLATEAU, "lr_decay_factor", c.lr_decay_factor(),
       "must be below 1 with lr_schedule PLATEAU (1 would never reduce)");
  need(c.lr_milestones_size() > 0 || c.lr_schedule() != TaskConfig::MULTISTEP, "lr_milestones", "[]",
       "MULTISTEP needs at least one");
  need(c.lr_milestones_size() == 0 || c.lr_milestones(0) >= 1, "lr_milestones", absl::StrJoin(c.lr_milestones(), ","),
       "must be epochs >= 1");
  for (int i = 1; i < c.lr_milestones_size(); ++i) {
    need(c.lr_milestones(i) > c.lr_milestones(i - 1), "lr_milestones", absl::StrJoin(c.lr_milestones(), ","),
         "must increase");
  }
  need(!c.target_metric().empty(), "target_metric", "\"\"", "must name a metric evaluate() returns");
  // A NaN target is never reached and never says so.
  need(std::isfinite(c.target_value()), "target_value", c.target_value(), "must be finite");
  for (int i = 0; i < c.more_targets_size(); ++i) {
    need(!c.more_targets(i).metric().empty(), absl::StrCat("more_targets[", i, "].metric"), "\"\"",
         "must name a metric evaluate() returns");
    need(std::isfinite(c.more_targets(i).value()), absl::StrCat("more_targets[", i, "].value"),
         c.more_targets(i).value(), "must be finite");
  }
  need(c.eval_every_epochs() >= 1, "eval_every_epochs", c.eval_every_epochs(), "must be >= 1");
  need(std::isfinite(c.price_per_hour()) && c.price_per_hour() >= 0, "price_per_hour", c.price_per_hour(),
       "must be >= 0; 0 means no price figures");
  need(c.checkpoint_interval_minutes() >= 0, "checkpoint_interval_minutes", c.checkpoint_interval_minutes(),
       "must be >= 0; 0 means epoch ends only");
  need(!c.resume() || !c.checkpoint_dir().empty(), "resume", "true", "needs checkpoint_dir");
  need(!c.has_checkpoint_interval_minutes() || !c.checkpoint_dir().empty(), "checkpoint_interval_minutes",
       c.checkpoint_interval_minutes(), "needs checkpoint_dir, without which no checkpoint is taken");
  need(c.data_path().empty() || !c.synthetic(), "data_path", c.data_path(),
       "not read with synthetic, which generates the data");
  // Loss scaling and the gradients' reduction dtype are mixed precision's.
  need(!c.has_loss_scaler() || c.dtype() != TaskConfig::F32, "loss_scaler", "{...}",
       "needs dtype F16 or BF16; F32 scales no loss");
  need(!c.reduce_gradients_in_f32() || c.dtype() != TaskConfig::F32, "reduce_gradients_in_f32", "true",
       "needs dtype F16 or BF16; F32 gradients are reduced in f32 anyway");
  // Each worker is a thread with batches of its own in flight; past this
  // the thread's creation failed with a bare EAGAIN.
  need(c.num_workers() >= 0 && c.num_workers() <= 1024, "num_workers", c.num_workers(), "must be in [0, 1024]");
  need(c.progress_interval_seconds() >= 0, "progress_interval_seconds", c.progress_interval_seconds(), "must be >= 0");
  need(c.warmup_steps() >= 0, "warmup_steps", c.warmup_steps(), "must be >= 0");
  if (problems.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("invalid config: ", absl::StrJoin(problems, "; ")));
}

Json config_to_json(const TaskConfig& config) {
  Json j = message_json(config);
  // No optimizer chosen trains with SGD's defaults (make_optimizer): the
  // report says so, lr included, as it does for every other default.
  if (config.optimizer_case() == TaskConfig::OPTIMIZER_NOT_SET) j["sgd"] = message_json(config.sgd());
  return j;
}

}  // namespace ts::tasks
