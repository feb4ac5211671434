import { beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_PAGE_SIZE, getPageSize, PAGE_SIZE_OPTIONS, setPageSize } from './pageSize';
import { memoryStorage, setStore, store } from './storage';

beforeEach(() => setStore(memoryStorage()));

describe('page size', () => {
  it('offers 10/20/50/100 and defaults to 10', () => {
    expect([...PAGE_SIZE_OPTIONS]).toEqual([10, 20, 50, 100]);
    expect(DEFAULT_PAGE_SIZE).toBe(10);
    expect(getPageSize()).toBe(10);
  });

  it('remembers a choice locally, shared and per list', () => {
    setPageSize(50);
    expect(store().getItem('page-size')).toBe('50');
    expect(getPageSize()).toBe(50);
    expect(getPageSize('user')).toBe(50);
    setPageSize(20, 'user');
    expect(getPageSize('user')).toBe(20);
    expect(getPageSize()).toBe(50);
  });

  it('ignores sizes outside the options', () => {
    setPageSize(33);
    expect(getPageSize()).toBe(10);
    store().setItem('page-size', 'abc');
    expect(getPageSize()).toBe(10);
  });
});
