/** Page size choice (10/20/50/100), stored locally per list through the shell's lib/pageSize. */
import { PAGE_SIZE_OPTIONS, getPageSize, setPageSize } from '../../lib/pageSize';

export const PAGE_SIZES = PAGE_SIZE_OPTIONS;

export function readPageSize(scope?: string): number {
  return getPageSize(scope);
}

export function writePageSize(size: number, scope?: string): void {
  setPageSize(size, scope);
}
