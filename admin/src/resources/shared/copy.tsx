import { useCallback, useState } from 'react';
import { useNotify } from 'react-admin';
import { ManualCopyDialog, copyText } from '../../components/CopyDialog';

/**
 * The shell's copy (components/CopyDialog) plus a success notice: on success notify
 * 已复制到剪贴板！, on failure open the manual-copy dialog (无法复制到剪贴板，请手动复制).
 * Render `dialog` somewhere in the component.
 */
export function useCopy() {
  const notify = useNotify();
  const [failed, setFailed] = useState<string | null>(null);
  const copy = useCallback(
    async (text: string) => {
      if (await copyText(text)) notify('res.common.copied', { type: 'success' });
      else setFailed(text);
    },
    [notify],
  );
  const dialog = <ManualCopyDialog text={failed} onClose={() => setFailed(null)} />;
  return { copy, dialog };
}
