import { useEffect, useState } from 'react';
import { Button, Dialog, DialogActions, DialogContent, DialogTitle } from '@mui/material';
import { useTranslate } from 'react-admin';
import { api } from '../lib/http';
import { dismissNotice, shouldShowNotice } from '../lib/notice';
import { HtmlContent } from './HtmlContent';

/**
 * The site notice (the `Notice` option, GET /api/notice) as a dialog on the home page, as new-api
 * shows it: Markdown (or HTML), dismissed with its button, and not shown again until its text changes.
 */
export function NoticeDialog() {
  const translate = useTranslate();
  const [text, setText] = useState('');
  useEffect(() => {
    let live = true;
    api()
      .raw<string>('GET', '/api/notice')
      .then((r) => {
        const v = r.success ? String(r.data ?? '') : '';
        if (live && shouldShowNotice(v)) setText(v);
      })
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, []);
  const close = () => {
    dismissNotice(text);
    setText('');
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
