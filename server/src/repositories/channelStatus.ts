/**
 * The statuses of a channel (`channels.status`) and of each key of a multi-key channel
 * (`channel_info.multi_key_status_list`, repositories/channelInfo.ts), defined once: a key's are the
 * channel's. 1 enabled, 2 disabled by an admin, 3 disabled automatically (an invalid key, an
 * exhausted quota, a keyword match, a slow test).
 */
export const CHANNEL_STATUS = { enabled: 1, manuallyDisabled: 2, autoDisabled: 3 } as const;

/** A key's status: the same values as a channel's. */
export const KEY_STATUS = CHANNEL_STATUS;
