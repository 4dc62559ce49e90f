// Calls into libjpeg (libjpeg-turbo's libjpeg API), whose error handler must
// not return: ours keeps the message and longjmps back to where the call
// began, which then fails with it. Warnings fail the same way (libjpeg would
// go on, leaving a gray or garbled image) except the codes a codec
// tolerates. Shared by the decoder (jpeg.cc) and the encoder (jpeg_encode.cc).
#pragma once

#include <csetjmp>
#include <cstdio>  // jpeglib.h uses FILE without including it

#include <jpeglib.h>
// jpeglib.h before jerror.h, which uses its types.
#include <jerror.h>

#include "absl/types/span.h"

namespace ts::data::libjpeg {

// A codec's error manager: cinfo->err points at `mgr`, its first member.
struct ErrorHandler {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  // Warnings with these message codes (J_MESSAGE_CODE) are counted and
  // passed over.
  absl::Span<const int> tolerated_warnings;
  // Of the last failure: a warning (damaged data) rather than an error.
  bool failed_on_warning = false;
  char message[JMSG_LENGTH_MAX] = {};
};

// Returns cinfo's error manager, routed to `handler`; set it as cinfo->err
// before jpeg_create_compress/decompress.
jpeg_error_mgr* install(ErrorHandler& handler);

// Fails the libjpeg call in progress with `message`; for libjpeg's callbacks
// (a progress monitor) on a codec whose handler came from install().
[[noreturn]] void fail(j_common_ptr cinfo, const char* message);

// Runs `calls` (libjpeg calls on a codec whose handler is `handler`) and
// returns whether they finished; when not, the handler holds the message.
// A failure leaves `calls` by longjmp, so nothing in it may have a
// destructor. Never inlined (it calls setjmp), which keeps its frame.
template <typename Calls>
bool call(ErrorHandler& handler, Calls&& calls) {
  handler.failed_on_warning = false;
  handler.message[0] = '\0';
  if (setjmp(handler.jump) != 0) return false;
  calls();
  return true;
}

}  // namespace ts::data::libjpeg
