/** Redemption code screens' texts (`res.redemption.*`), zh and en; merged into the catalogue by resources/messages.ts. */

const zh = {
  title: '兑换码管理',
  empty: '暂无兑换码',
  add: '添加兑换码',
  create_title: '创建新的兑换码',
  edit_title: '更新兑换码信息',
  copy: '复制兑换码',
  copy_selected: '复制所选兑换码',
  search: '搜索兑换码的 ID 和名称',
  fields: {
    id: 'ID',
    name: '名称',
    status: '状态',
    quota: '额度',
    created_time: '创建时间',
    used_user_id: '兑换人 ID',
    count: '生成数量',
  },
  status: {
    unused: '未使用',
    disabled: '已禁用',
    used: '已使用',
    unknown: '未知状态',
  },
  hint: {
    name: '1–20 个字符，留空则使用额度作为名称',
    count: '一次最多生成 {{max}} 个，创建后自动下载兑换码文件',
  },
  confirm: {
    delete: '确定删除此兑换码？',
    batch_delete: '确定删除所选兑换码？',
  },
  msg: {
    name_length: '名称长度不能超过 20 个字符！',
    quota_integer: '额度必须是非负整数！',
    count_range: '生成数量必须在 1 到 100 之间！',
    created: '创建成功',
    updated: '兑换码更新成功！',
    select_one: '请至少选择一个兑换码！',
    deleted_count: '已删除 {{count}} 个兑换码！',
  },
};

export const redemptionMessages: { zh: typeof zh; en: typeof zh } = {
  zh,
  en: {
    title: 'Redemption codes',
    empty: 'No redemption codes yet',
    add: 'Add codes',
    create_title: 'Create redemption codes',
    edit_title: 'Edit redemption code',
    copy: 'Copy code',
    copy_selected: 'Copy selected codes',
    search: 'Search code ID or name',
    fields: {
      id: 'ID',
      name: 'Name',
      status: 'Status',
      quota: 'Quota',
      created_time: 'Created',
      used_user_id: 'Redeemed by',
      count: 'Number to create',
    },
    status: {
      unused: 'Unused',
      disabled: 'Disabled',
      used: 'Used',
      unknown: 'Unknown',
    },
    hint: {
      name: '1–20 characters; empty uses the quota as the name',
      count: 'At most {{max}} at once; the codes are downloaded as a text file',
    },
    confirm: {
      delete: 'Delete this redemption code?',
      batch_delete: 'Delete the selected codes?',
    },
    msg: {
      name_length: 'The name must be at most 20 characters!',
      quota_integer: 'Quota must be a non-negative integer!',
      count_range: 'The number must be between 1 and 100!',
      created: 'Created',
      updated: 'Redemption code updated!',
      select_one: 'Please select at least one redemption code!',
      deleted_count: 'Deleted {{count}} codes!',
    },
  },
};
