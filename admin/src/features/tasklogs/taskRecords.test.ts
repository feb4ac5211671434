import { describe, expect, it } from 'vitest';
import { parseDateText } from '../../resources/shared/format';
import {
  actionKey,
  codeColor,
  codeKey,
  drawingDefaultForm,
  fromLogFilter,
  isLong,
  pagerCount,
  progressPercent,
  showCallbackBanner,
  startOfDay,
  statusColor,
  statusKey,
  taskDefaultForm,
  taskDetail,
  timeTakenColor,
  timeTakenSeconds,
  toLogFilter,
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

describe('list filters (the server query keys, kept in the URL)', () => {
  const form = { channel: '7', task_id: ' mj-1 ', start: '2026-11-01T00:00', end: '' };
  const start = parseDateText('2026-11-01T00:00')!;
  it('admins: channel filter, ms for drawings', () => {
    expect(toLogFilter('mj', form, true)).toEqual({ channel_id: 7, mj_id: 'mj-1', start_timestamp: start * 1000 });
  });
  it('users: no channel, seconds for tasks', () => {
    expect(toLogFilter('task', form, false)).toEqual({ task_id: 'mj-1', start_timestamp: start });
    expect(toLogFilter('mj', { channel: '', task_id: '', start: '', end: '' }, false)).toEqual({});
  });
  it('leaves out emptied (null), invalid and non-numeric fields', () => {
    expect(toLogFilter('task', { channel: 'x7', task_id: null, start: 'soon', end: null }, true)).toEqual({});
  });
  it('reads the filters back into the form', () => {
    const d = drawingDefaultForm(new Date(2026, 10, 22, 15, 30, 0));
    expect(fromLogFilter('mj', toLogFilter('mj', { ...d, channel: '7', task_id: 'mj-1' }, true))).toEqual({ ...d, channel: '7', task_id: 'mj-1' });
    const t = taskDefaultForm(new Date(2026, 10, 22, 15, 30, 0));
    expect(fromLogFilter('task', toLogFilter('task', t, false))).toEqual(t);
    expect(fromLogFilter('task', {})).toEqual({ channel: '', task_id: '', start: '', end: '' });
  });
});

describe('pager count without a total', () => {
  it('one more row while the server may have more, so "next" stays enabled', () => {
    expect(pagerCount(1, 10, 10, true)).toBe(11);
    expect(pagerCount(2, 10, 4, false)).toBe(14);
    expect(pagerCount(3, 20, 20, true)).toBe(61);
    expect(pagerCount(1, 10, 0, false)).toBe(0);
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
