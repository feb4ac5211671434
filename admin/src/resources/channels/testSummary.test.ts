import { describe, expect, it } from 'vitest';
import { SUMMARY_POLL_MS, summaryPoll, type Summary } from './testSummary';

const summary = (running: boolean): Summary => ({ running, started_at: 1, finished_at: 0, total: 3, succeeded: 1, failed: 0, results: [] });

describe('test-all summary polling', () => {
  it('asks again while the sweep runs', () => {
    expect(summaryPoll({ status: 'success', data: summary(true) }, 0)).toBe(SUMMARY_POLL_MS);
    expect(summaryPoll({ status: 'success', data: summary(true) }, 2)).toBe(SUMMARY_POLL_MS);
  });
  it('stops once the sweep is done', () => {
    expect(summaryPoll({ status: 'success', data: summary(false) }, 0)).toBe(false);
    expect(summaryPoll({ status: 'success', data: summary(false) }, 1)).toBe(false);
  });
  it('waits for the first line of a sweep just started, not for one never run', () => {
    expect(summaryPoll({ status: 'success', data: null }, 1)).toBe(SUMMARY_POLL_MS);
    expect(summaryPoll({ status: 'success', data: null }, 0)).toBe(false);
  });
  it('does not ask again after a failed call, nor before the first answer', () => {
    expect(summaryPoll({ status: 'error', data: summary(true) }, 1)).toBe(false);
    expect(summaryPoll({ status: 'pending', data: undefined }, 1)).toBe(false);
  });
});
