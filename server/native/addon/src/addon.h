#ifndef GATEWAY_NATIVE_ADDON_H_
#define GATEWAY_NATIVE_ADDON_H_

#include <node.h>
#include <v8.h>

// Each part adds its functions to the module's exports.
void InitMemory(v8::Local<v8::Object> exports);
void InitAccept(v8::Local<v8::Object> exports);

#endif  // GATEWAY_NATIVE_ADDON_H_
