import { z } from 'zod';
import { zmsg } from '../../i18n';
import { pagingQuery, qStr } from '../../lib/validate';

const str = (max: number) => z.string().max(max, zmsg('input.max_chars', { max }));
/** Optional string field; null (sent by some forms for empty fields) counts as left out. */
const optStr = (max: number) => z.preprocess((v) => (v === null ? undefined : v), str(max).optional());
/** Integer from a number or a numeric string (the console parses quota to an integer). */
const wholeNumber = z.preprocess(
  (v) => (typeof v === 'string' && v.trim() !== '' ? Number(v) : v),
  z.number({ message: 'input.must_be_int' }).int('input.must_be_int').refine(Number.isSafeInteger, 'input.number_too_large'),
);

export const loginBody = z.object({ username: str(128).optional().default(''), password: str(128).optional().default('') });
export const registerBody = z.object({
  username: str(64).optional().default(''),
  password: str(128).optional().default(''),
  password2: optStr(128),
  email: optStr(128),
  verification_code: optStr(32),
  aff_code: optStr(32),
});
export const resetBody = z.object({ email: str(128).optional().default(''), token: str(128).optional().default('') });
export const selfBody = z.object({
  display_name: optStr(64),
  password: optStr(128),
  original_password: optStr(128),
  password2: optStr(128),
});
export const settingBody = z.object({
  notify_type: z.string().max(16).optional(),
  quota_warning_threshold: z.preprocess((v) => (typeof v === 'string' && v.trim() !== '' ? Number(v) : v), z.number().finite()).optional(),
  webhook_url: optStr(1024),
  webhook_secret: optStr(512),
  notification_email: optStr(128),
  accept_unset_model_ratio_model: z.preprocess((v) => (v === null ? undefined : v === 'true' ? true : v === 'false' ? false : v), z.boolean().optional()),
});
export const affTransferBody = z.object({ quota: wholeNumber });
export const createBody = z.object({
  username: str(64).optional().default(''),
  password: str(128).optional().default(''),
  display_name: optStr(64),
  role: z.number().int().optional(),
});
export const updateBody = z.object({
  id: wholeNumber,
  username: optStr(64),
  display_name: optStr(64),
  password: optStr(128),
  email: optStr(128),
  group: optStr(64),
  quota: z.preprocess((v) => (v === null ? undefined : v), wholeNumber.optional()),
  remark: optStr(255),
});
export const manageBody = z.object({
  id: wholeNumber,
  action: z.enum(['promote', 'demote', 'disable', 'enable', 'delete'], { message: 'user.action_invalid' }),
});

export const listQuery = pagingQuery;
export const searchQuery = pagingQuery.extend({ keyword: qStr(), group: qStr() });
