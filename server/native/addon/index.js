'use strict';
// null where the native build failed or was skipped (no compiler) or was built for another Node:
// callers then do without it (server/src/lib/native.ts).
try {
  module.exports = require('./build/Release/gateway_native.node');
} catch {
  module.exports = null;
}
