// Bytes allocated per relayed call, by function, for allocations.sh. Two roles:
// - preloaded in the target (`node --require bench/allocProbe.cjs …`, ALLOC_OUT=file): SIGUSR2
//   starts V8's sampling heap profiler with the objects the GC has since collected included (so it
//   samples what was allocated, not what is still alive), the next SIGUSR2 stops it and writes the
//   profile to ALLOC_OUT;
// - run as `node bench/allocProbe.cjs <profile> <calls> [top]`: prints bytes per call in total, by
//   area (the target's bundle, Node's own modules, undici, V8 API callbacks) and for the top functions.
const fs = require('node:fs');

function preload() {
  const inspector = require('node:inspector');
  const session = new inspector.Session();
  session.connect();
  let sampling = false;
  process.on('SIGUSR2', () => {
    sampling = !sampling;
    if (sampling) {
      session.post('HeapProfiler.startSampling', {
        samplingInterval: 512,
        includeObjectsCollectedByMinorGC: true,
        includeObjectsCollectedByMajorGC: true,
      });
      return;
    }
    session.post('HeapProfiler.stopSampling', (err, r) => {
      if (err) console.error('allocProbe:', err);
      else fs.writeFileSync(process.env.ALLOC_OUT, JSON.stringify(r.profile));
    });
  });
}

function area(url) {
  if (url === '') return 'V8 API and native';
  if (/bench\/tmp\/[^/]+\.cjs$/.test(url)) return 'target bundle';
  if (url.includes('undici')) return 'undici';
  if (url.startsWith('node:')) return 'Node';
  return 'other modules';
}

function summarize(file, calls, top) {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
  const byArea = new Map();
  const byFunction = new Map();
  let total = 0;
  const walk = (node) => {
    const { functionName, url, lineNumber } = node.callFrame;
    const fn = `${functionName || '(anonymous)'} ${url.split('/').slice(-2).join('/')}:${lineNumber + 1}`;
    total += node.selfSize;
    byArea.set(area(url), (byArea.get(area(url)) ?? 0) + node.selfSize);
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + node.selfSize);
    for (const child of node.children) walk(child);
  };
  walk(profile.head);
  const perCall = (bytes) => String(Math.round(bytes / calls)).padStart(7);
  console.log(`bytes allocated per call: ${Math.round(total / calls)} (sampled every 512 bytes)`);
  for (const [name, bytes] of [...byArea].sort((a, b) => b[1] - a[1])) console.log(`${perCall(bytes)}  ${name}`);
  console.log('top functions (self):');
  for (const [name, bytes] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${perCall(bytes)}  ${name}`);
}

if (require.main === module) summarize(process.argv[2], Number(process.argv[3]), Number(process.argv[4] ?? 30));
else preload();
