import { useEffect, useState } from 'react';
import { useTranslate } from 'react-admin';
import { Box, Typography } from '@mui/material';
import { useStatus } from '../lib/StatusContext';
import { store } from '../lib/storage';

/**
 * Custom footer HTML when set (status footer_html, also cached as local footer_html, re-read
 * every 200 ms five times after mount: the status may land after the first render), otherwise a default credit line.
 */
export function Footer() {
  const translate = useTranslate();
  const { status } = useStatus();
  const [html, setHtml] = useState<string>(() => String(status.footer_html ?? store().getItem('footer_html') ?? ''));
  useEffect(() => {
    setHtml(String(status.footer_html ?? store().getItem('footer_html') ?? ''));
  }, [status.footer_html]);
  useEffect(() => {
    let n = 0;
    const timer = setInterval(() => {
      n += 1;
      const v = store().getItem('footer_html');
      if (v !== null) setHtml(v);
      if (n >= 5) clearInterval(timer);
    }, 200);
    return () => clearInterval(timer);
  }, []);
  return (
    <Box
      component="footer"
      data-testid="footer"
      sx={{ py: 1.5, px: 2, textAlign: 'center', borderTop: 1, borderColor: 'divider', color: 'text.secondary', fontSize: 13 }}
    >
      {html ? (
        <Box className="custom-footer" dangerouslySetInnerHTML={{ __html: html }} />
      ) : (
        <Typography variant="body2" color="text.secondary" fontSize={13}>
          {translate('app.footer.default', { name: status.system_name || translate('app.name'), version: status.version ? `v${status.version}` : '' })}
        </Typography>
      )}
    </Box>
  );
}
