import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { Button, Dialog, DialogActions, DialogContent, DialogTitle } from '@mui/material';
import { useTranslate } from 'react-admin';
import { api } from '../lib/http';
import { dismissNotice, shouldShowNotice } from '../lib/notice';
import { HtmlContent } from './HtmlContent';
import { LOAD_ONCE } from '../resources/shared/hooks';

/**
 * The site notice (the `Notice` option, GET /api/notice) as a dialog on the home page, as new-api
 * shows it: Markdown (or HTML), dismissed with its button, and not shown again until its text changes.
 */
export function NoticeDialog() {
  const translate = useTranslate();
  // Asked on each showing of the page; a failed load shows nothing.
  const { data: notice = '' } = useQuery({
    queryKey: ['gateway', 'notice'],
    queryFn: () =>
      api()
        .raw<string>('GET', '/api/notice')
        .then((r) => (r.success ? String(r.data ?? '') : '')),
    ...LOAD_ONCE,
  });
  const [closed, setClosed] = useState(false);
  const text = !closed && shouldShowNotice(notice) ? notice : '';
  const close = () => {
    dismissNotice(text);
    setClosed(true);
  };
  return (
    <Dialog open={text !== ''} onClose={close} maxWidth="sm" fullWidth data-testid="notice-dialog">
      <DialogTitle>{translate('app.home.notice_title')}</DialogTitle>
      <DialogContent dividers>
        <HtmlContent content={text} testId="notice-content" />
      </DialogContent>
      <DialogActions>
        <Button onClick={close} variant="contained" disableElevation data-testid="notice-close">
          {translate('app.home.notice_close')}
        </Button>
      </DialogActions>
    </Dialog>
  );
}
