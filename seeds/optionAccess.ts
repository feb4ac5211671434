/**
 * Who may change an option. Operation options — quotas, pricing and ratios, channel health, logs
 * and display, sensitive words, drawing and tasks, dashboard, site modes, rate limits, the model
 * and relay settings, routing (breakers, health) — need an admin (role 10). System options — login providers, mail, payment,
 * bot check, fetch protection, site content, the server address, security — need root (100).
 * A key not listed here is a system option: a new option is root-only until it is placed.
 */
const OPERATION_KEYS = new Set([
  'QuotaForNewUser',
  'QuotaForInviter',
  'QuotaForInvitee',
  'QuotaRemindThreshold',
  'PreConsumedQuota',
  'StreamCacheQueueLength',
  'QuotaPerUnit',
  'ModelRatio',
  'CompletionRatio',
  'CacheRatio',
  'ModelPrice',
  'AudioRatio',
  'AudioCompletionRatio',
  'GroupRatio',
  'UserUsableGroups',
  'TopUpLink',
  'AutomaticDisableChannelEnabled',
  'AutomaticEnableChannelEnabled',
  'ChannelDisableThreshold',
  'AutomaticDisableKeywords',
  'RetryTimes',
  'LogConsumeEnabled',
  'ErrorLogEnabled',
  'DisplayInCurrencyEnabled',
  'DisplayTokenStatEnabled',
  'DefaultCollapseSidebar',
  'Chats',
  'ChatLink',
  'ChatLink2',
  'CheckSensitiveEnabled',
  'CheckSensitiveOnPromptEnabled',
  'SensitiveWords',
  'DrawingEnabled',
  'TaskEnabled',
  'MjNotifyEnabled',
  'MjAccountFilterEnabled',
  'MjModeClearEnabled',
  'MjForwardUrlEnabled',
  'MjActionCheckSuccessEnabled',
  'DataExportEnabled',
  'DataExportDefaultTime',
  'DataExportInterval',
  'DemoSiteEnabled',
  'SelfUseModeEnabled',
  'ModelRequestRateLimitEnabled',
  'ModelRequestRateLimitCount',
  'ModelRequestRateLimitSuccessCount',
  'ModelRequestRateLimitDurationMinutes',
]);
const OPERATION_PREFIXES = ['gemini.', 'claude.', 'global.', 'general_setting.', 'Routing'];

export type OptionRole = 'admin' | 'root';

export function optionRole(key: string): OptionRole {
  return OPERATION_KEYS.has(key) || OPERATION_PREFIXES.some((p) => key.startsWith(p)) ? 'admin' : 'root';
}
