/**
 * Translations of the resource screens, merged into the app's i18n resources by i18n/index.ts.
 * Two namespaces: `resources.<name>.name` (react-admin's menu/title labels) and `res.*` (the
 * screens' own texts). Interpolation uses i18next's {{var}}. zh is the default language; the zh
 * texts of validations and results are the product's own wording.
 */
import * as channelMessages from './channels/messages';
import * as logMessages from './logs/messages';
import { tokenMessages } from './tokens/messages';
import { redemptionMessages } from './redemptions/messages';
import { userMessages } from './users/messages';
import { topupOrderMessages } from './topups/messages';

const zh = {
  resources: {
    channel: { name: '渠道' },
    token: { name: '令牌' },
    redemption: { name: '兑换码' },
    user: { name: '用户' },
    log: { name: '日志' },
    topup_order: { name: '充值订单' },
  },
  res: {
    common: {
      actions: '操作',
      add: '添加',
      all: '全部',
      cancel: '取消',
      close: '关闭',
      columns: '列设置',
      confirm: '确定',
      confirm_title: '确认操作',
      copied: '已复制到剪贴板！',
      copy_failed: '无法复制到剪贴板，请手动复制',
      delete: '删除',
      delete_selected: '删除所选',
      deleted: '删除成功',
      disable: '禁用',
      displayed_rows: '第 {{from}}-{{to}} 条，共 {{count}} 条',
      edit: '编辑',
      empty: '暂无数据',
      enable: '启用',
      none: '无',
      op_success: '操作成功完成！',
      refresh: '刷新',
      reset: '重置',
      rows_per_page: '每页条数',
      search: '查询',
      submit: '提交',
      unknown: '未知',
    },
    channel: channelMessages.zh,
    token: tokenMessages.zh,
    redemption: redemptionMessages.zh,
    user: userMessages.zh,
    log: logMessages.zh,
    topup_order: topupOrderMessages.zh,
  },
};

type Messages = typeof zh;

const en: Messages = {
  resources: {
    channel: { name: 'Channels' },
    token: { name: 'Tokens' },
    redemption: { name: 'Redemption codes' },
    user: { name: 'Users' },
    log: { name: 'Logs' },
    topup_order: { name: 'Top-up orders' },
  },
  res: {
    common: {
      actions: 'Actions',
      add: 'Add',
      all: 'All',
      cancel: 'Cancel',
      close: 'Close',
      columns: 'Columns',
      confirm: 'Confirm',
      confirm_title: 'Please confirm',
      copied: 'Copied to clipboard!',
      copy_failed: 'Unable to copy to clipboard, please copy manually',
      delete: 'Delete',
      delete_selected: 'Delete selected',
      deleted: 'Deleted',
      disable: 'Disable',
      displayed_rows: '{{from}}-{{to}} of {{count}}',
      edit: 'Edit',
      empty: 'No data',
      enable: 'Enable',
      none: 'None',
      op_success: 'Operation completed successfully!',
      refresh: 'Refresh',
      reset: 'Reset',
      rows_per_page: 'Rows per page',
      search: 'Search',
      submit: 'Submit',
      unknown: 'Unknown',
    },
    channel: channelMessages.en,
    token: tokenMessages.en,
    redemption: redemptionMessages.en,
    user: userMessages.en,
    log: logMessages.en,
    topup_order: topupOrderMessages.en,
  },
};

export const resourceMessages: { zh: Record<string, unknown>; en: Record<string, unknown> } = { zh, en };
