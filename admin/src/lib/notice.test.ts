import { describe, expect, it } from 'vitest';
import { noticeHash, shouldShowNotice } from './notice';

describe('notice', () => {
  it('hashes stably and tells texts apart', () => {
    expect(noticeHash('维护通知')).toBe(noticeHash('维护通知'));
    expect(noticeHash('a')).not.toBe(noticeHash('b'));
    expect(noticeHash('')).toMatch(/^[0-9a-f]{8}$/);
  });
  it('shows a notice until that text is dismissed, and again once it changes', () => {
    expect(shouldShowNotice('', null)).toBe(false);
    expect(shouldShowNotice('   ', null)).toBe(false);
    expect(shouldShowNotice('hello', null)).toBe(true);
    expect(shouldShowNotice('hello', noticeHash('hello'))).toBe(false);
    expect(shouldShowNotice(' hello \n', noticeHash('hello'))).toBe(false);
    expect(shouldShowNotice('hello again', noticeHash('hello'))).toBe(true);
  });
});
