import { describe, expect, it } from 'vitest';
import { parseDateText } from '../../resources/shared/format';
import {
  actionKey,
  appendPage,
  clampPage,
  codeColor,
  codeKey,
  drawingDefaultForm,
  emptyLazy,
  isLong,
  listUrl,
  pageRows,
  pagerCount,
  pageToFetch,
  progressPercent,
  showCallbackBanner,
  startOfDay,
  statusColor,
  statusKey,
  taskDefaultForm,
  taskDetail,
  timeTakenColor,
  timeTakenSeconds,
} from './taskRecords';
import { en, zh } from './messages';

describe('submit result codes', () => {
  it('maps 1/21/22/0 and anything else to unknown', () => {
    expect([1, 21, 22, 0, 23, -1, '1', null].map(codeKey)).toEqual([
      'submitted',
      'waiting',
      'duplicate',
      'not_submitted',
      'unknown',
      'unknown',
      'submitted',
      'unknown',
    ]);
    expect(codeColor(1)).toBe('green');
    expect(codeColor(22)).toBe('orange');
    expect(codeColor(99)).toBe('grey');
  });
});

describe('statuses', () => {
  it('knows the six drawing statuses', () => {
    expect(['SUCCESS', 'NOT_START', 'SUBMITTED', 'IN_PROGRESS', 'FAILURE', 'MODAL'].map((s) => statusKey(s))).toEqual([
      'success',
      'not_start',
      'submitted',
      'in_progress',
      'failure',
      'modal',
    ]);
    expect(statusKey('QUEUED')).toBe('unknown');
    expect(statusKey('')).toBe('unknown');
  });
  it('adds QUEUED, UNKNOWN and empty = submitting for tasks', () => {
    expect(statusKey('QUEUED', true)).toBe('queued');
    expect(statusKey('UNKNOWN', true)).toBe('unknown');
    expect(statusKey('', true)).toBe('submitting');
    expect(statusKey(null, true)).toBe('submitting');
    expect(statusKey('WHATEVER', true)).toBe('unknown');
    expect(statusColor('FAILURE')).toBe('red');
    expect(statusColor('SUCCESS', true)).toBe('green');
  });
  it('labels MUSIC/LYRICS as task types and drawing actions separately', () => {
    expect(actionKey('MUSIC', true)).toBe('music');
    expect(actionKey('lyrics', true)).toBe('lyrics');
    expect(actionKey('VIDEO', true)).toBe('video');
    expect(actionKey('IMAGINE', true)).toBeNull();
    expect(actionKey('IMAGINE')).toBe('imagine');
    expect(actionKey('NOPE')).toBeNull();
  });
  it('has a label for every key it can produce, in both languages', () => {
    for (const m of [zh, en]) {
      const t = m.feat.tasklogs;
      for (const c of [1, 21, 22, 0, 5]) expect(t.code[codeKey(c)]).toBeTruthy();
      for (const s of ['SUCCESS', 'NOT_START', 'SUBMITTED', 'IN_PROGRESS', 'FAILURE', 'MODAL', 'QUEUED', 'UNKNOWN', '', 'x'])
        expect((t.status as Record<string, string>)[statusKey(s, true)]).toBeTruthy();
    }
  });
});

describe('time taken', () => {
  it('uses milliseconds for drawings and seconds for tasks', () => {
    expect(timeTakenSeconds(1_000_000, 1_045_000, 'ms')).toBe(45);
    expect(timeTakenSeconds(1_000, 1_045, 's')).toBe(45);
    expect(timeTakenSeconds(1_000, 0, 's')).toBeNull();
    expect(timeTakenSeconds(0, 1_000, 's')).toBeNull();
    expect(timeTakenSeconds(2_000, 1_000, 's')).toBeNull();
  });
  it('is red above 60 s, otherwise green', () => {
    expect(timeTakenColor(60)).toBe('green');
    expect(timeTakenColor(60.1)).toBe('red');
    expect(timeTakenColor(0)).toBe('green');
  });
  it('reads progress text', () => {
    expect(progressPercent('80%')).toBe(80);
    expect(progressPercent('')).toBe(0);
    expect(progressPercent('150%')).toBe(100);
  });
});

describe('default ranges', () => {
  const now = new Date(2026, 10, 22, 15, 30, 0);
  it('drawing: 30 days ago → 1 hour ahead', () => {
    const f = drawingDefaultForm(now);
    const nowSec = Math.floor(now.getTime() / 1000);
    expect(parseDateText(f.start)).toBe(nowSec - 30 * 86400);
    expect(parseDateText(f.end)).toBe(nowSec + 3600);
  });
  it('task: from the start of today', () => {
    const f = taskDefaultForm(now);
    expect(parseDateText(f.start)).toBe(startOfDay(now));
    expect(new Date(startOfDay(now) * 1000).getHours()).toBe(0);
    expect(f.start.endsWith('T00:00')).toBe(true);
  });
});

describe('list URLs', () => {
  const form = { channel: '7', id: ' mj-1 ', start: '2026-11-01T00:00', end: '' };
  const start = parseDateText('2026-11-01T00:00')!;
  it('admins: channel filter, ms for drawings', () => {
    expect(listUrl('mj', true, form, 2, 20)).toBe(`/api/mj/?p=2&page_size=20&channel_id=7&mj_id=mj-1&start_timestamp=${start * 1000}`);
  });
  it('users: self endpoint without channel, seconds for tasks', () => {
    expect(listUrl('task', false, form, 1, 10)).toBe(`/api/task/self?p=1&page_size=10&task_id=mj-1&start_timestamp=${start}`);
    expect(listUrl('mj', false, { channel: '', id: '', start: '', end: '' }, 1, 10)).toBe('/api/mj/self/?p=1&page_size=10');
  });
});

describe('lazy pager', () => {
  const rows = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ id: from + i }));
  it('requests the next server page only past the last known page', () => {
    let s = emptyLazy<{ id: number }>();
    expect(pageToFetch(s, 0)).toBe(1);
    s = appendPage(s, rows(10), 10);
    expect(pagerCount(s)).toBe(11); // "next" stays enabled
    expect(pageToFetch(s, 0)).toBeNull();
    expect(pageToFetch(s, 1)).toBe(2);
    s = appendPage(s, rows(4, 10), 10);
    expect(s.hasMore).toBe(false);
    expect(pagerCount(s)).toBe(14);
    expect(pageToFetch(s, 2)).toBeNull();
    expect(pageRows(s, 1, 10).map((r) => r.id)).toEqual([10, 11, 12, 13]);
  });
  it('clamps to the last page with rows after an empty answer', () => {
    let s = appendPage(emptyLazy<{ id: number }>(), rows(10), 10);
    s = appendPage(s, [], 10);
    expect(s.hasMore).toBe(false);
    expect(clampPage(s, 1, 10)).toBe(0);
    expect(clampPage(appendPage(emptyLazy(), [], 10), 3, 10)).toBe(0);
  });
});

describe('dialogs and banner', () => {
  it('expands the JSON text fields of a task', () => {
    const d = taskDetail({ id: 1, data: '{"a":1}', properties: 'not json', task_id: 't' });
    expect(d.data).toEqual({ a: 1 });
    expect(d.properties).toBe('not json');
  });
  it('opens long texts in a dialog', () => {
    expect(isLong('short')).toBe(false);
    expect(isLong('x'.repeat(21))).toBe(true);
  });
  it('shows the callback banner to admins unless mj_notify_enabled is true', () => {
    expect(showCallbackBanner(true, undefined)).toBe(true);
    expect(showCallbackBanner(true, 'false')).toBe(true);
    expect(showCallbackBanner(true, true)).toBe(false);
    expect(showCallbackBanner(true, 'true')).toBe(false);
    expect(showCallbackBanner(false, undefined)).toBe(false);
  });
});
