/**
 * Prints a full run's results file as the Markdown table bench/README.md shows under "Latest results":
 * `npm run bench:summary -- [bench/results/<date>.json]` (default: the newest full run).
 * The results files are the history; the README keeps only the latest table.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describeFloors, type MachineFloors } from './floors';

interface StreamLevel {
  level: number;
  ok?: boolean;
  firstFrameP99Ms?: number;
}
interface TargetResult {
  name: string;
  skipped?: string;
  /** Conversion rows (CM, CR): client protocol → upstream protocol. */
  conversion?: string;
  throughputRps?: number;
  cpuUsPerRequest?: number;
  addedLatencyP50Ms?: number;
  addedLatencyP99Ms?: number;
  overheadHeaderP50Ms?: number;
  addedTtftMs?: number;
  addedTtftBurstMs?: number;
  concurrentStreams?: { sustained?: number; levels?: StreamLevel[] };
  rssIdleMB?: number;
  rssLoadMB?: number;
  rssAfterMB?: number;
}
interface Results {
  date: string;
  quick: boolean;
  machine: { cpus: string; cores: number; node: string; floors?: MachineFloors };
  targets: Record<string, TargetResult>;
  ratios: Record<string, number>;
  /** null: could not be judged (a target missing or skipped). */
  checks: Record<string, boolean | null>;
}

const dir = path.join(__dirname, 'results');
const newestFullRun = (): string => {
  const runs = fs.readdirSync(dir).filter((f) => /^\d{4}-\d\d-\d\dT[\d-]+Z\.json$/.test(f));
  if (!runs.length) throw new Error(`no full run in ${dir}`);
  return path.join(dir, runs.sort().at(-1)!);
};

const num = (v: number | null | undefined, digits = 0): string =>
  v == null || Number.isNaN(v) ? '–' : v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }).replace(/,/g, ' ');

export function summarize(r: Results, file: string): string {
  const out: string[] = [];
  out.push(`\`${path.basename(file)}\` (${r.machine.cores} × ${r.machine.cpus}, Node ${r.machine.node}${r.quick ? ', quick' : ''}):`);
  out.push('');
  out.push('| target | req/s c=50 | CPU µs/req | c=1 +p50 / +p99 ms | hdr p50 ms | +TTFT (burst) ms | streams | RSS idle/load/after MB |');
  out.push('|---|---:|---:|---|---:|---|---|---|');
  for (const [id, t] of Object.entries(r.targets)) {
    const streams = t.concurrentStreams?.sustained ? num(t.concurrentStreams.sustained) : '–';
    const added = id === 'A' ? '–' : `${num(t.addedLatencyP50Ms, 2)} / ${num(t.addedLatencyP99Ms, 2)}`;
    const ttft = id === 'A' ? '–' : `${num(t.addedTtftMs, 2)} (${num(t.addedTtftBurstMs, 2)})`;
    // Conversion rows run in C's process: only their own under-load maximum is theirs.
    const rss = t.rssIdleMB == null && t.rssLoadMB == null ? '–' : `${num(t.rssIdleMB)}/${num(t.rssLoadMB)}/${num(t.rssAfterMB)}`;
    if (t.skipped) {
      out.push(`| ${id} ${t.name} | skipped (below) | | | | | | |`);
      continue;
    }
    out.push(
      `| ${id} ${t.name} | ${num(t.throughputRps)} | ${num(t.cpuUsPerRequest)} | ${added} | ${num(t.overheadHeaderP50Ms, 2)} | ${ttft} | ${streams} | ${rss} |`,
    );
  }
  const skipped = Object.entries(r.targets).filter(([, t]) => t.skipped);
  if (skipped.length) {
    out.push('');
    for (const [id, t] of skipped) out.push(`${id} skipped: ${t.skipped}`);
  }
  out.push('');
  out.push(
    `Ratios: ${Object.entries(r.ratios)
      .map(([k, v]) => `${k} ${num(v, 2)}`)
      .join(', ')}.`,
  );
  const failed = Object.entries(r.checks)
    .filter(([, ok]) => ok === false)
    .map(([k]) => k);
  const unjudged = Object.entries(r.checks)
    .filter(([, ok]) => ok == null)
    .map(([k]) => k);
  const judged = Object.keys(r.checks).length - unjudged.length;
  out.push(failed.length ? `FAIL: ${failed.join('; ')}.` : `All ${judged} targets PASS.`);
  if (unjudged.length) out.push(`n/a: ${unjudged.join('; ')}.`);
  const floors = r.machine.floors && describeFloors(r.machine.floors);
  if (floors) out.push(`Machine floors (measured before the run): ${floors}.`);
  return out.join('\n');
}

if (require.main === module) {
  const file = process.argv[2] ? path.resolve(process.argv[2]) : newestFullRun();
  process.stdout.write(`${summarize(JSON.parse(fs.readFileSync(file, 'utf8')) as Results, file)}\n`);
}
