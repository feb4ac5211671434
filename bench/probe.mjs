// Preloaded (`node --import ./bench/probe.mjs …`) into every target process the harness starts
// with an IPC channel, including Portkey, which we cannot edit. On {probe: id} it answers with
// the process's own CPU time (process.cpuUsage(), µs) and memory, so the harness can compute CPU
// per request and RSS idle / under load / after without trusting the target to self-report.
if (typeof process.send === 'function') {
  process.on('message', (m) => {
    if (!m || typeof m !== 'object' || !('probe' in m)) return;
    const c = process.cpuUsage();
    const mem = process.memoryUsage();
    process.send({ probe: m.probe, cpuUs: c.user + c.system, rss: mem.rss, heapUsed: mem.heapUsed });
  });
  // Parent gone → exit, so an interrupted run never leaves targets behind.
  process.on('disconnect', () => process.exit(0));
}
