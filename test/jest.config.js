/** Server tests: jest + @swc/jest (type checking is `npm run typecheck`). */
module.exports = {
  rootDir: '..',
  roots: ['<rootDir>/test/server'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.(t|j)s$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }],
  },
  // otplib's default plugins need @scure/base and @noble/hashes 2, published as ESM only: compile it like our sources.
  transformIgnorePatterns: ['^(?!.*/node_modules/(@scure/base|@noble/hashes)/).*/node_modules/'],
  testEnvironment: 'node',
  // Generous: hooks build apps, hash passwords and start servers; a loaded 2-core CI box is slow.
  testTimeout: 60000,
  maxWorkers: 2,
  // No forceExit: every test closes what it opens (apps, servers, clients, timers), so a handle
  // left open shows up as a worker that does not exit (find it with --detectOpenHandles).
  // A worker with nothing open still needs time to exit: node frees its whole V8 heap on the way
  // out, ≈1 GB after a full run, and on a slow VM that takes 0.5-0.8 s. Jest's 500 ms default then
  // kills it and blames a leak that is not there. A handle really left open still never lets the
  // worker exit, so it is still reported, 5 s later.
  workerGracefulExitTimeout: 5000,
};
