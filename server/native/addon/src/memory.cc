/*
 * What an idle server needs to give memory back, and JavaScript cannot reach:
 *
 * lowMemoryNotification(): V8's Isolate::LowMemoryNotification(): full GCs in memory-reducing
 *   mode (until nothing more is freed, at most 7), which also compact the old generation and
 *   shrink the young generation to its minimum. global.gc() does neither: after a burst it left
 *   16 MB of young generation and ≈ 12 MB of free old-generation pages resident.
 * trim(): glibc's malloc_trim(0), which madvise()s the whole free pages inside the malloc heap
 *   back to the OS. free() only gives back memory at the top of the heap, so after a burst of
 *   churned socket buffers the freed memory in the middle of the arena stays resident.
 *   Returns true if memory was released. Other C libraries (macOS, musl): returns false.
 */

#include "addon.h"
#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace {

void LowMemoryNotification(const v8::FunctionCallbackInfo<v8::Value>& args) {
  args.GetIsolate()->LowMemoryNotification();
}

void Trim(const v8::FunctionCallbackInfo<v8::Value>& args) {
  bool released = false;
#if defined(__GLIBC__)
  released = malloc_trim(0) != 0;
#endif
  args.GetReturnValue().Set(released);
}

}  // namespace

void InitMemory(v8::Local<v8::Object> exports) {
  NODE_SET_METHOD(exports, "lowMemoryNotification", LowMemoryNotification);
  NODE_SET_METHOD(exports, "trim", Trim);
}
