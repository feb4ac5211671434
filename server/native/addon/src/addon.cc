/*
 * The gateway's optional native helpers, one file per concern:
 *   memory.cc  what an idle server needs to give memory back (idle GC);
 *   accept.cc  draining a listen socket's accept queue (the HTTP listener).
 *
 * Built against the running Node's headers by `npm install` (node-gyp), like better-sqlite3: the
 * V8 API is not ABI-stable, so a Node upgrade needs a rebuild; until then it fails to load and
 * the callers (server/src/lib/native.ts) do without it.
 */
#include "addon.h"

NODE_MODULE_INIT(/* exports, module, context */) {
  InitMemory(exports);
  InitAccept(exports);
}
