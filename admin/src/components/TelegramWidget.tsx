import { useEffect, useRef } from 'react';
import { Box, type SxProps } from '@mui/material';

/**
 * Telegram's login widget: loads telegram.org's script for `bot`; the widget sends the browser to
 * `authUrl` (`/api/oauth/telegram/login` to log in, `/api/oauth/telegram/bind?state=…` to bind).
 */
export function TelegramWidget({
  bot,
  authUrl,
  size,
  testId,
  sx,
}: {
  bot: string;
  authUrl: string;
  size: 'small' | 'medium' | 'large';
  testId: string;
  sx?: SxProps;
}) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = ref.current;
    if (!el || !bot) return;
    const s = document.createElement('script');
    s.src = 'https://telegram.org/js/telegram-widget.js?22';
    s.async = true;
    s.setAttribute('data-telegram-login', bot);
    s.setAttribute('data-size', size);
    s.setAttribute('data-auth-url', authUrl);
    s.setAttribute('data-request-access', 'write');
    el.appendChild(s);
    return () => {
      el.innerHTML = '';
    };
  }, [bot, authUrl, size]);
  return <Box ref={ref} sx={sx} data-testid={testId} />;
}
