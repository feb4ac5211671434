/** The admin top-up order list's texts (`res.topup_order.*`), zh and en; merged into the catalogue by resources/messages.ts. */

const zh = {
  title: '充值订单',
  empty: '暂无充值订单',
  filters: {
    username: '用户名',
    status: '状态',
    start: '起始时间',
    end: '结束时间',
  },
  fields: {
    id: 'ID',
    username: '用户',
    trade_no: '订单号',
    amount: '充值额度',
    money: '支付金额',
    payment_method: '支付方式',
    status: '状态',
    create_time: '创建时间',
    complete_time: '完成时间',
  },
  status: { pending: '待支付', success: '成功' },
  method: { zfb: '支付宝', wx: '微信' },
  yuan: '{{amount}} 元',
};

const en: typeof zh = {
  title: 'Top-up orders',
  empty: 'No top-up orders',
  filters: {
    username: 'Username',
    status: 'Status',
    start: 'From',
    end: 'To',
  },
  fields: {
    id: 'ID',
    username: 'User',
    trade_no: 'Order no.',
    amount: 'Amount',
    money: 'Paid',
    payment_method: 'Method',
    status: 'Status',
    create_time: 'Created',
    complete_time: 'Completed',
  },
  status: { pending: 'Pending', success: 'Success' },
  method: { zfb: 'Alipay', wx: 'WeChat Pay' },
  yuan: '¥{{amount}}',
};

export const topupOrderMessages = { zh, en };
