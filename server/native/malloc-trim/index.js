'use strict';
// null where the native build failed or was skipped (no compiler, not glibc): callers then skip the trim.
try {
  module.exports = require('./build/Release/malloc_trim.node');
} catch {
  module.exports = null;
}
