/**
 * Bundles the server (TypeScript) into one CommonJS file with esbuild, dependencies left as
 * `require`s of node_modules. `npm start` runs the bundle with plain `node`: no TypeScript loader in
 * the running process (the tsx loader keeps a hooks thread and transpiled sources in memory,
 * ≈ 45 MB of RSS). Takes about a second; `npm run dev` still runs the sources through tsx.
 *
 *   node server/build.mjs [entry.ts] [out.cjs]
 *   defaults: server/src/index.ts → server/dist/index.cjs
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const entry = path.resolve(root, process.argv[2] ?? 'server/src/index.ts');
const outfile = path.resolve(root, process.argv[3] ?? 'server/dist/index.cjs');

await build({
  entryPoints: [entry],
  outfile,
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  packages: 'external',
  sourcemap: 'linked',
  logLevel: 'warning',
});
