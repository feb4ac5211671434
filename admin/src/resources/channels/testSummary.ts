/** The last "test all channels" sweep as GET /api/channel/test/summary answers it, and when to ask again. */
import type { ChannelTestItem, ChannelTestSummary } from '../../../../server/src/channels/testSummary';

/** One channel's result, with the channel's current name (the server adds it when answering). */
export type SummaryItem = ChannelTestItem & { name: string };

export type Summary = Omit<ChannelTestSummary, 'results'> & { results: SummaryItem[] };

/** How often a running sweep is asked about. */
export const SUMMARY_POLL_MS = 2000;

/**
 * When to ask again after an answer (`false`: not): while the sweep runs, and after a sweep just
 * started from the toolbar (`run` > 0) that has not written its first line yet (no summary). A
 * failed call does not ask again.
 */
export function summaryPoll(answer: { status: 'pending' | 'success' | 'error'; data: Summary | null | undefined }, run: number): number | false {
  if (answer.status !== 'success') return false;
  return answer.data?.running || (run > 0 && !answer.data) ? SUMMARY_POLL_MS : false;
}
