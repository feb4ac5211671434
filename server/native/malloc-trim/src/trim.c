/*
 * trim(): calls glibc's malloc_trim(0), which madvise()s the whole free pages inside the malloc
 * heap back to the OS. free() only gives back memory at the top of the heap, so after a burst of
 * churned socket buffers the freed memory in the middle of the arena stays resident.
 * Returns true if memory was released. Other C libraries (macOS, musl): returns false, calls nothing.
 */
#define NAPI_VERSION 8
#include <node_api.h>
#include <stdbool.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

static napi_value Trim(napi_env env, napi_callback_info info) {
  (void)info;
  bool released = false;
#if defined(__GLIBC__)
  released = malloc_trim(0) != 0;
#endif
  napi_value result;
  if (napi_get_boolean(env, released, &result) != napi_ok) return NULL;
  return result;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  if (napi_create_function(env, "trim", NAPI_AUTO_LENGTH, Trim, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "trim", fn) != napi_ok) return NULL;
  return exports;
}
