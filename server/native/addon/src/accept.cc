/*
 * acceptPending(fd, max): accepts the connections waiting in a listen socket's queue, up to `max`,
 * without blocking; returns their file descriptors (non-blocking, close-on-exec). Linux only
 * (accept4); elsewhere it returns [] and the caller relies on Node's own accepting.
 *
 * Why: libuv ≥ 1.45 (Node 20) accepts one connection per event-loop round (libuv/libuv#3696).
 * When the loop is busy relaying thousands of streams, a round takes tens of milliseconds and a
 * burst of new connections drains at one per round: they wait seconds in the kernel's queue. The
 * listener (server/src/lib/httpServer.ts) calls this when Node has accepted one, so each round
 * takes the whole queue, as libuv did before.
 */
#include "addon.h"
#if defined(__linux__)
#include <errno.h>
#include <sys/socket.h>
#endif

namespace {

void AcceptPending(const v8::FunctionCallbackInfo<v8::Value>& args) {
  v8::Isolate* isolate = args.GetIsolate();
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  v8::Local<v8::Array> accepted = v8::Array::New(isolate);
#if defined(__linux__)
  if (args.Length() > 1 && args[0]->IsInt32() && args[1]->IsInt32()) {
    const int fd = args[0].As<v8::Int32>()->Value();
    const int max = args[1].As<v8::Int32>()->Value();
    uint32_t n = 0;
    while (static_cast<int>(n) < max) {
      const int conn = accept4(fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (conn < 0) {
        // A connection reset while queued, or a signal: try the next one. Anything else (the
        // queue is empty: EAGAIN; out of descriptors: EMFILE) ends the drain; Node's own accept
        // reports real errors on its next round.
        if (errno == EINTR || errno == ECONNABORTED) continue;
        break;
      }
      accepted->Set(context, n++, v8::Integer::New(isolate, conn)).Check();
    }
  }
#endif
  args.GetReturnValue().Set(accepted);
}

}  // namespace

void InitAccept(v8::Local<v8::Object> exports) {
  NODE_SET_METHOD(exports, "acceptPending", AcceptPending);
}
