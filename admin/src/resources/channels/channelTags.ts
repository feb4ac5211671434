/** Tag mode of the channel list: rows aggregated by tag, the tag edit body and tag-level checks. */
import { joinComma, splitComma } from '../shared/format';

const str = (v: unknown) => (v === null || v === undefined ? '' : String(v));

/** Tag-level priority must be an integer: error key or null. */
export function validateTagPriority(v: unknown): string | null {
  return /^-?\d+$/.test(String(v ?? '').trim()) ? null : 'res.channel.msg.priority_integer';
}
/** Tag-level weight must be a non-negative integer: error key or null. */
export function validateTagWeight(v: unknown): string | null {
  return /^\d+$/.test(String(v ?? '').trim()) ? null : 'res.channel.msg.weight_nonnegative';
}

/** A row of the tag-mode list: an aggregate of the channels that share a tag. */
export interface TagRow<Child = Record<string, unknown>> {
  id: string;
  key: string;
  tag: string;
  name: string;
  group: string;
  used_quota: number;
  response_time: number;
  priority: number;
  weight: number;
  status: number;
  type: number;
  children: Child[];
  isTag: true;
}

/**
 * Tag mode: channels that share a tag become one aggregate row holding them as children (group is
 * the union, used quota the sum, response time the mean of tested children, priority/weight from the
 * first child, status enabled when any child is enabled). Untagged channels stay single rows.
 * Rows the server already aggregated (with `children`) pass through unchanged.
 */
export function groupByTag<T extends Record<string, unknown>>(channels: readonly T[]): (T | TagRow<T>)[] {
  const out: (T | TagRow<T>)[] = [];
  const byTag = new Map<string, TagRow<T>>();
  for (const ch of channels) {
    if (Array.isArray(ch.children)) {
      // The server already aggregated this tag (tag_mode=true answers aggregate rows, shaped like a
      // TagRow but typed by the wire as a plain record): keep it.
      out.push({ ...ch, id: ch.id ?? `tag:${ch.tag}`, isTag: true } as unknown as TagRow<T>);
      continue;
    }
    const tag = str(ch.tag).trim();
    if (!tag) {
      out.push(ch);
      continue;
    }
    let row = byTag.get(tag);
    if (!row) {
      row = {
        id: `tag:${tag}`,
        key: `tag:${tag}`,
        tag,
        name: tag,
        group: '',
        used_quota: 0,
        response_time: 0,
        priority: Number(ch.priority) || 0,
        weight: Number(ch.weight) || 0,
        status: 2,
        type: Number(ch.type) || 0,
        children: [],
        isTag: true,
      };
      byTag.set(tag, row);
      out.push(row);
    }
    row.children.push(ch);
  }
  for (const row of byTag.values()) {
    const groups: string[] = [];
    let tested = 0;
    let rtSum = 0;
    for (const c of row.children) {
      for (const g of splitComma(str(c.group))) if (!groups.includes(g)) groups.push(g);
      row.used_quota += Number(c.used_quota) || 0;
      const rt = Number(c.response_time) || 0;
      if (rt > 0) {
        tested++;
        rtSum += rt;
      }
      if (Number(c.status) === 1) row.status = 1;
    }
    row.group = groups.join(',');
    row.response_time = tested ? Math.round(rtSum / tested) : 0;
  }
  return out;
}

export function isTagRow(r: unknown): r is TagRow {
  return !!r && typeof r === 'object' && (r as TagRow).isTag === true;
}

/** Tag edit payload: returns null when nothing changed (没有任何修改！). */
export function tagEditPayload(
  original: { tag: string; model_mapping: string; groups: string[]; models: string[] },
  edited: { new_tag: string; model_mapping: string; groups: string[]; models: string[] },
): Record<string, unknown> | null {
  const body: Record<string, unknown> = { tag: original.tag };
  let changed = false;
  if (edited.new_tag.trim() !== original.tag) {
    body.new_tag = edited.new_tag.trim();
    changed = true;
  }
  if (edited.model_mapping.trim() !== original.model_mapping.trim()) {
    body.model_mapping = edited.model_mapping.trim();
    changed = true;
  }
  if (joinComma(edited.groups) !== joinComma(original.groups)) {
    body.groups = joinComma(edited.groups);
    changed = true;
  }
  if (joinComma(edited.models) !== joinComma(original.models)) {
    body.models = joinComma(edited.models);
    changed = true;
  }
  return changed ? body : null;
}
