/** Translations of the dashboard (feat.detail.*). */
export const zh = {
  feat: {
    detail: {
      title: '数据看板',
      start: '起始时间',
      end: '结束时间',
      granularity: '时间粒度',
      g: { hour: '小时', day: '天', week: '周' },
      username: '用户名称',
      search: '查询',
      reset: '重置',
      refresh: '刷新',
      total_quota: '消耗额度',
      total_count: '请求次数',
      total_tokens: 'Token 消耗',
      avg_rpm: '平均 RPM',
      avg_tpm: '平均 TPM',
      chart: { quota: '消耗分布', count: '调用次数', token_used: 'Token 消耗' },
      by_model: '模型统计',
      model: '模型',
      other: '其他',
      empty: '暂无数据',
    },
  },
};

export const en: typeof zh = {
  feat: {
    detail: {
      title: 'Dashboard',
      start: 'Start time',
      end: 'End time',
      granularity: 'Granularity',
      g: { hour: 'Hour', day: 'Day', week: 'Week' },
      username: 'Username',
      search: 'Search',
      reset: 'Reset',
      refresh: 'Refresh',
      total_quota: 'Quota used',
      total_count: 'Requests',
      total_tokens: 'Tokens used',
      avg_rpm: 'Average RPM',
      avg_tpm: 'Average TPM',
      chart: { quota: 'Quota', count: 'Requests', token_used: 'Tokens' },
      by_model: 'By model',
      model: 'Model',
      other: 'Other',
      empty: 'No data',
    },
  },
};
