/** Translations of the chat pages (feat.chat.*). */
export const zh = {
  title: '聊天',
  redirect_title: '聊天跳转',
  loading: '正在加载聊天…',
  redirecting: '正在跳转…',
  open: '没有自动跳转？点击这里',
  no_token: '当前没有可用的启用令牌，请确认是否有令牌处于启用状态！',
  misconfigured: '聊天链接配置错误，请联系管理员',
  no_links: '请联系管理员配置聊天链接',
  parse_failed: '聊天数据解析失败',
};

export const en: typeof zh = {
  title: 'Chat',
  redirect_title: 'Chat redirect',
  loading: 'Loading the chat…',
  redirecting: 'Redirecting…',
  open: 'Not redirected? Click here',
  no_token: 'There is no enabled token: please make sure one of your tokens is enabled!',
  misconfigured: 'The chat link is misconfigured, please contact the administrator',
  no_links: 'Please ask the administrator to configure chat links',
  parse_failed: 'Failed to parse the chat data',
};
