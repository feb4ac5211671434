import type { AppContext } from '../context';
import { scrubSecrets } from '../relay/errors';

/** One channel's result in the last "test all channels" sweep. */
export interface ChannelTestItem {
  id: number;
  success: boolean;
  message: string;
  /** Seconds. */
  time: number;
}

/** The last (or running) sweep of "test all channels": what the console's summary shows. */
export interface ChannelTestSummary {
  running: boolean;
  started_at: number;
  finished_at: number;
  total: number;
  succeeded: number;
  failed: number;
  results: ChannelTestItem[];
}

const KEY = 'channel_test:summary';
/** Kept a week: the console shows the last sweep, whichever node ran it. */
const TTL = 7 * 86400;

/**
 * Records the sweep's progress in the KV (every node answers the console from it). Writes happen
 * once per tested channel, in the background sweep, never on a relay call.
 */
export class TestSummaryRecorder {
  private summary: ChannelTestSummary;

  constructor(private readonly app: AppContext) {
    this.summary = { running: true, started_at: Math.floor(Date.now() / 1000), finished_at: 0, total: 0, succeeded: 0, failed: 0, results: [] };
  }

  async start(total: number): Promise<void> {
    this.summary.total = total;
    await this.save();
  }

  async add(id: number, r: { success: boolean; message: string; time: number }): Promise<void> {
    this.summary.results.push({ id, success: r.success, message: scrubSecrets(r.message).slice(0, 500), time: r.time });
    if (r.success) this.summary.succeeded++;
    else this.summary.failed++;
    await this.save();
  }

  async done(): Promise<void> {
    this.summary.running = false;
    this.summary.finished_at = Math.floor(Date.now() / 1000);
    await this.save();
  }

  private async save(): Promise<void> {
    await this.app.kv.set(KEY, JSON.stringify(this.summary), TTL);
  }
}

/** The last sweep's summary with the channels' current names, or null when none ran. */
export async function channelTestSummary(app: AppContext): Promise<(ChannelTestSummary & { results: Array<ChannelTestItem & { name: string }> }) | null> {
  const raw = await app.kv.get(KEY);
  if (!raw) return null;
  const s = JSON.parse(raw) as ChannelTestSummary;
  const ids = s.results.map((r) => r.id);
  const names = new Map<number, string>();
  for (let i = 0; i < ids.length; i += 500) {
    const rows: Array<{ id: number | string; name: string }> = await app
      .knex('channels')
      .whereIn('id', ids.slice(i, i + 500))
      .select('id', 'name');
    for (const r of rows) names.set(Number(r.id), String(r.name ?? ''));
  }
  return { ...s, results: s.results.map((r) => ({ ...r, name: names.get(r.id) ?? '' })) };
}
