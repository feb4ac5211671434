import { useCallback, useState } from 'react';
import { useTranslate } from 'react-admin';
import { Button, Dialog, DialogActions, DialogContent, DialogTitle, TextField } from '@mui/material';

/** Copies text; resolves false when the clipboard is unavailable or refused. */
export async function copyText(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard?.writeText) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    /* fall through */
  }
  try {
    const ta = document.createElement('textarea');
    ta.value = text;
    ta.style.position = 'fixed';
    ta.style.opacity = '0';
    document.body.appendChild(ta);
    ta.select();
    const ok = document.execCommand('copy');
    document.body.removeChild(ta);
    return ok;
  } catch {
    return false;
  }
}

/**
 * copy(text) → true when copied; otherwise opens the manual-copy dialog
 * ('无法复制到剪贴板，请手动复制') showing the text.
 */
export function useCopy() {
  const [manual, setManual] = useState<string | null>(null);
  const copy = useCallback(async (text: string) => {
    const ok = await copyText(text);
    if (!ok) setManual(text);
    return ok;
  }, []);
  const dialog = <ManualCopyDialog text={manual} onClose={() => setManual(null)} />;
  return { copy, dialog };
}

export function ManualCopyDialog({ text, onClose }: { text: string | null; onClose: () => void }) {
  const translate = useTranslate();
  return (
    <Dialog open={text !== null} onClose={onClose} fullWidth maxWidth="sm" data-testid="copy-dialog">
      <DialogTitle>{translate('app.copy.failed_title')}</DialogTitle>
      <DialogContent>
        <TextField value={text ?? ''} fullWidth multiline slotProps={{ htmlInput: { readOnly: true } }} onFocus={(e) => e.target.select()} sx={{ mt: 1 }} />
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{translate('app.copy.close')}</Button>
      </DialogActions>
    </Dialog>
  );
}
