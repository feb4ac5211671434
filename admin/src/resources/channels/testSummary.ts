/** The last "test all channels" sweep as GET /api/channel/test/summary answers it, and when to ask again. */

export interface SummaryItem {
  id: number;
  name: string;
  success: boolean;
  message: string;
  time: number;
}

export interface Summary {
  running: boolean;
  started_at: number;
  finished_at: number;
  total: number;
  succeeded: number;
  failed: number;
  results: SummaryItem[];
}

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
