'use strict';
// null where the native build failed or was skipped (no compiler) or was built for another Node:
// callers then collect with global.gc() and skip the trim.
try {
  module.exports = require('./build/Release/release_memory.node');
} catch {
  module.exports = null;
}
