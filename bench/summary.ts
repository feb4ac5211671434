/**
 * Prints a full run's results file as the Markdown table bench/README.md shows under "Latest results":
 * `npm run bench:summary -- [bench/results/<date>.json]` (default: the newest full run).
 * The results files are the history; the README keeps only the latest table, bench/HISTORY.md the earlier ones.
 * `npm run bench:summary -- --history` prints one line per full run instead (the ratios judged).
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
  /** thrSlices: throughput slices per round (absent: one 10 s run per target and round). */
  config?: { thrSlices?: number };
  /** Every turn's ratio: present when the ratios are medians of per-turn ratios (else ratios of medians). */
  ratioSamples?: Record<string, number[]>;
  machine: { cpus: string; cores: number; node: string; floors?: MachineFloors };
  targets: Record<string, TargetResult>;
  ratios: Record<string, number>;
  /** null: could not be judged (a target missing or skipped). */
  checks: Record<string, boolean | null>;
}

const dir = path.join(__dirname, 'results');
const fullRuns = (): string[] =>
  fs
    .readdirSync(dir)
    .filter((f) => /^\d{4}-\d\d-\d\dT[\d-]+Z\.json$/.test(f))
    .sort()
    .map((f) => path.join(dir, f));
const newestFullRun = (): string => {
  const runs = fullRuns();
  if (!runs.length) throw new Error(`no full run in ${dir}`);
  return runs.at(-1)!;
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

const HISTORY_RATIOS = ['C/B', 'CM/B', 'CR/B', 'C2/C', 'C/P'];

/** One line per run: its host, the throughput method, A (how fast the machine was), the ratios judged and how many targets failed. */
export function history(runs: Array<{ file: string; r: Results }>): string {
  const out = [
    `| run | CPU | slices | ratios | A req/s | ${HISTORY_RATIOS.join(' | ')} | failed |`,
    `|---|---|---:|---|---:|${HISTORY_RATIOS.map(() => '---:').join('|')}|---:|`,
  ];
  for (const { file, r } of runs) {
    const failed = Object.values(r.checks).filter((ok) => ok === false).length;
    out.push(
      `| ${path.basename(file, '.json')} | ${r.machine.cpus.split(' ')[0]} | ${r.config?.thrSlices ?? 1} | ${r.ratioSamples ? 'per turn' : 'of medians'} | ${num(r.targets.A?.throughputRps)} | ${HISTORY_RATIOS.map((k) => num(r.ratios[k], 2)).join(' | ')} | ${failed} |`,
    );
  }
  return out.join('\n');
}

if (require.main === module) {
  const read = (file: string) => ({ file, r: JSON.parse(fs.readFileSync(file, 'utf8')) as Results });
  if (process.argv[2] === '--history') process.stdout.write(`${history(fullRuns().map(read))}\n`);
  else {
    const file = process.argv[2] ? path.resolve(process.argv[2]) : newestFullRun();
    const { r } = read(file);
    process.stdout.write(`${summarize(r, file)}\n`);
  }
}
