#include "data/readers/libjpeg_call.h"

#include <cstring>
#include <type_traits>

namespace ts::data::libjpeg {
namespace {

static_assert(std::is_standard_layout_v<ErrorHandler>, "cinfo->err must point at the handler's first member");

ErrorHandler& handler_of(j_common_ptr cinfo) { return *reinterpret_cast<ErrorHandler*>(cinfo->err); }

[[noreturn]] void fail_with_message(j_common_ptr cinfo) {
  ErrorHandler& handler = handler_of(cinfo);
  (*cinfo->err->format_message)(cinfo, handler.message);
  std::longjmp(handler.jump, 1);
}

void error_exit(j_common_ptr cinfo) { fail_with_message(cinfo); }

void emit_message(j_common_ptr cinfo, int level) {
  if (level >= 0) return;  // trace output
  ErrorHandler& handler = handler_of(cinfo);
  cinfo->err->num_warnings++;
  for (const int code : handler.tolerated_warnings) {
    if (cinfo->err->msg_code == code) return;
  }
  handler.failed_on_warning = true;
  fail_with_message(cinfo);
}

// Nothing goes to stderr: failures carry the text.
void output_message(j_common_ptr) {}

}  // namespace

jpeg_error_mgr* install(ErrorHandler& handler) {
  jpeg_std_error(&handler.mgr);
  handler.mgr.error_exit = &error_exit;
  handler.mgr.emit_message = &emit_message;
  handler.mgr.output_message = &output_message;
  return &handler.mgr;
}

void fail(j_common_ptr cinfo, const char* message) {
  ErrorHandler& handler = handler_of(cinfo);
  std::strncpy(handler.message, message, sizeof(handler.message) - 1);
  handler.message[sizeof(handler.message) - 1] = '\0';
  std::longjmp(handler.jump, 1);
}

}  // namespace ts::data::libjpeg
