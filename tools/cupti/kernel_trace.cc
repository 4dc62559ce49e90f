// A CUPTI injection library: the CUDA driver loads it into any CUDA program
// started with CUDA_INJECTION64_PATH=<this .so> and calls InitializeInjection
// at cuInit. It records every kernel, memcpy and memset the GPU runs, and
// after each profiler window and at exit writes to $TS_KERNEL_TRACE (JSON,
// trainstack.kernel_trace.v1) each kernel's launch count and total GPU time,
// counting only what started inside the program's profiler windows
// (cudaProfilerStart .. cudaProfilerStop; the whole run when it opens none).
// Our ResNet-50 step benchmark and the PyTorch step peers open one window per
// timed step when TS_KERNEL_TRACE is set, so `tools/kernel_profile compare`
// sets the two side by side per step, with one method of measurement for
// both programs. See tools/kernel_profile.
#include <cupti.h>
#include <cxxabi.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {

constexpr size_t kBufferBytes = 8 << 20;
constexpr size_t kBufferAlignment = 8;

struct Activity {
  uint32_t name;  // index into Trace::names
  uint64_t start, end;
};

// A record as read from a buffer: the kernel's mangled name (owned by
// CUPTI, shared by its records) or one of ours in brackets.
struct Parsed {
  const char* name;
  uint64_t start, end;
};

// Everything recorded, shared by CUPTI's threads and the program's.
struct Trace {
  std::mutex mutex;
  std::string out_path;
  std::vector<std::string> names;
  std::unordered_map<std::string, uint32_t> name_ids;
  std::vector<Activity> activities;
  std::vector<std::pair<uint64_t, uint64_t>> windows;  // [start, stop] in CUPTI's clock
  bool window_open = false;
  bool initialized = false;
  uint64_t window_start = 0;
  uint64_t dropped = 0;
  uint64_t untimed = 0;  // records without a valid start and end
  std::vector<std::string> errors;

  uint32_t intern(const char* name) {
    auto [it, inserted] = name_ids.try_emplace(name, static_cast<uint32_t>(names.size()));
    if (inserted) names.push_back(it->first);
    return it->second;
  }
};

// Never destroyed: CUPTI may deliver a buffer during the program's exit.
Trace& trace() {
  static Trace* t = new Trace;
  return *t;
}

void note_error(const char* what, CUptiResult result) {
  const char* text = nullptr;
  cuptiGetResultString(result, &text);
  std::lock_guard<std::mutex> lock(trace().mutex);
  trace().errors.push_back(std::string(what) + ": " + (text != nullptr ? text : "unknown CUPTI error"));
}

std::string demangle(const char* name) {
  int status = 0;
  char* readable = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string result = status == 0 && readable != nullptr ? readable : name;
  std::free(readable);
  return result;
}

const char* memcpy_name(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return "[memcpy HtoD]";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return "[memcpy DtoH]";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return "[memcpy DtoD]";
    default:
      return "[memcpy other]";
  }
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlignment, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

// Parses without the lock (a buffer holds tens of thousands of records),
// then appends under it; names are demangled once each, in the report.
void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream, uint8_t* buffer, size_t, size_t valid) {
  std::vector<Parsed> parsed;
  uint64_t untimed = 0;
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    Parsed p{nullptr, 0, 0};
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const auto* kernel = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
        p = {kernel->name != nullptr ? kernel->name : "[unnamed kernel]", kernel->start, kernel->end};
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const auto* copy = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
        p = {memcpy_name(copy->copyKind), copy->start, copy->end};
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        const auto* set = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
        p = {"[memset]", set->start, set->end};
        break;
      }
      default:
        continue;
    }
    // CUPTI leaves both at 0 when it could not time the work, and a forced
    // flush may hand over records not yet complete.
    if (p.start == 0 || p.end < p.start) {
      ++untimed;
    } else {
      parsed.push_back(p);
    }
  }
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(context, stream, &dropped) != CUPTI_SUCCESS) dropped = 0;
  std::free(buffer);
  Trace& t = trace();
  std::lock_guard<std::mutex> lock(t.mutex);
  for (const Parsed& p : parsed) t.activities.push_back({t.intern(p.name), p.start, p.end});
  t.untimed += untimed;
  t.dropped += dropped;
}

void write_report(uint32_t flush_flags);

// Opens a window when cuProfilerStart returns and closes it when
// cuProfilerStop is entered (the programs synchronize before stopping).
void CUPTIAPI on_driver_call(void*, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void* data) {
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  const auto* call = static_cast<const CUpti_CallbackData*>(data);
  const bool start = id == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart && call->callbackSite == CUPTI_API_EXIT;
  const bool stop = id == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop && call->callbackSite == CUPTI_API_ENTER;
  if (!start && !stop) return;
  uint64_t now = 0;
  cuptiGetTimestamp(&now);
  Trace& t = trace();
  {
    std::lock_guard<std::mutex> lock(t.mutex);
    if (start && !t.window_open) {
      t.window_open = true;
      t.window_start = now;
      return;
    }
    if (!stop || !t.window_open) return;
    t.window_open = false;
    t.windows.emplace_back(t.window_start, now);
  }
  // The report is rewritten after every window (outside the program's timed
  // step, which ended before it stopped the profiler), so a program killed
  // by a time limit still leaves what it traced. Only complete buffers are
  // taken here: a forced flush could hand over records still being filled
  // in, lost for good as untimed.
  write_report(0);
}

// The report is written by hand rather than with base/json: this library
// lives inside other programs (PyTorch's too), so it links nothing of ours.
std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

bool in_windows(const std::vector<std::pair<uint64_t, uint64_t>>& windows, uint64_t time) {
  // Windows are disjoint and in order: the last one starting at or before `time`.
  auto it = std::upper_bound(windows.begin(), windows.end(), std::make_pair(time, UINT64_MAX));
  return it != windows.begin() && time <= std::prev(it)->second;
}

// Flushes CUPTI's buffers and writes the totals so far (the lock is not held
// while flushing: the flush delivers buffers to buffer_completed).
void write_report(uint32_t flush_flags) {
  if (const CUptiResult r = cuptiActivityFlushAll(flush_flags); r != CUPTI_SUCCESS) {
    note_error("cuptiActivityFlushAll", r);
  }
  size_t late_drops = 0;
  if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &late_drops) != CUPTI_SUCCESS) late_drops = 0;
  Trace& t = trace();
  std::lock_guard<std::mutex> lock(t.mutex);
  t.dropped += late_drops;
  std::vector<std::pair<uint64_t, uint64_t>> windows = t.windows;
  if (t.window_open) windows.emplace_back(t.window_start, UINT64_MAX);
  const bool whole_run = windows.empty();
  struct Totals {
    int64_t count = 0;
    uint64_t total_ns = 0;
  };
  std::map<uint32_t, Totals> by_name;
  for (const Activity& a : t.activities) {
    if (!whole_run && !in_windows(windows, a.start)) continue;
    Totals& totals = by_name[a.name];
    ++totals.count;
    totals.total_ns += a.end - a.start;
  }
  std::vector<std::pair<uint32_t, Totals>> rows(by_name.begin(), by_name.end());
  std::sort(rows.begin(), rows.end(),
            [](const auto& x, const auto& y) { return x.second.total_ns > y.second.total_ns; });
  // Written beside and renamed over, so a reader never sees half a report.
  const std::string partial = t.out_path + ".partial";
  FILE* f = std::fopen(partial.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "kernel_trace: cannot write %s: %s\n", partial.c_str(), std::strerror(errno));
    return;
  }
  std::fprintf(f,
               "{\"format\": \"trainstack.kernel_trace.v1\", \"windows\": %zu, \"dropped_records\": %llu, "
               "\"untimed_records\": %llu,\n",
               whole_run ? 0 : windows.size(), static_cast<unsigned long long>(t.dropped),
               static_cast<unsigned long long>(t.untimed));
  std::fprintf(f, " \"errors\": [");
  for (size_t i = 0; i < t.errors.size(); ++i) std::fprintf(f, "%s%s", i ? ", " : "", json_string(t.errors[i]).c_str());
  std::fprintf(f, "],\n \"kernels\": [");
  for (size_t i = 0; i < rows.size(); ++i) {
    std::fprintf(f, "%s\n  {\"name\": %s, \"count\": %lld, \"total_ns\": %llu}", i ? "," : "",
                 json_string(demangle(t.names[rows[i].first].c_str())).c_str(),
                 static_cast<long long>(rows[i].second.count),
                 static_cast<unsigned long long>(rows[i].second.total_ns));
  }
  std::fprintf(f, "\n]}\n");
  if (std::fclose(f) != 0 || std::rename(partial.c_str(), t.out_path.c_str()) != 0) {
    std::fprintf(stderr, "kernel_trace: cannot write %s: %s\n", t.out_path.c_str(), std::strerror(errno));
  }
}

bool check(const char* what, CUptiResult result) {
  if (result == CUPTI_SUCCESS) return true;
  note_error(what, result);
  return false;
}

}  // namespace

// Called by the CUDA driver once, at cuInit. It reports success even when a
// CUPTI call failed: the report then lists the errors, which says more than
// a driver that quietly unloads the library.
extern "C" int InitializeInjection() {
  {
    std::lock_guard<std::mutex> lock(trace().mutex);
    if (trace().initialized) return 1;
    trace().initialized = true;
  }
  const char* path = std::getenv("TS_KERNEL_TRACE");
  trace().out_path = path != nullptr && *path != '\0' ? path : "kernel_trace.json";
  CUpti_SubscriberHandle subscriber = nullptr;
  bool ok = check("cuptiActivityRegisterCallbacks", cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
  for (const CUpti_ActivityKind kind :
       {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET}) {
    ok = check("cuptiActivityEnable", cuptiActivityEnable(kind)) && ok;
  }
  // Without the profiler-window callbacks every kernel of the run counts;
  // the report's errors say so.
  if (check("cuptiSubscribe", cuptiSubscribe(&subscriber, on_driver_call, nullptr))) {
    for (const CUpti_CallbackId id :
         {CUPTI_DRIVER_TRACE_CBID_cuProfilerStart, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop}) {
      check("cuptiEnableCallback", cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id));
    }
  }
  if (!ok) std::fprintf(stderr, "kernel_trace: CUPTI did not start; %s will list why\n", trace().out_path.c_str());
  std::atexit([] { write_report(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); });
  return 1;
}
