import { Button } from '@mui/material';
import { useListContext, useNotify, useRefresh, useTranslate, type RaRecord } from 'react-admin';
import { useGateway } from './api';
import { useConfirmedAction } from './confirm';
import { useCopy } from './copy';
import { useNotifyError } from './hooks';

/** Translation keys of one list's batch buttons. */
export interface BatchTexts {
  copySelected: string;
  selectOne: string;
  confirmDelete: string;
  deletedCount: string;
}

/**
 * Copy and delete for the checked rows of the surrounding list: a warning when none is checked,
 * a confirm before deleting. `textOf` is what a row contributes to the copied text (one per line);
 * it may ask the server (token keys: lists mask them), one row after the other.
 */
export const BatchButtons = ({ textOf, texts }: { textOf: (row: RaRecord) => string | Promise<string>; texts: BatchTexts }) => {
  const translate = useTranslate();
  const notify = useNotify();
  const notifyError = useNotifyError();
  const refresh = useRefresh();
  const dp = useGateway();
  const { resource, selectedIds, onUnselectItems, data } = useListContext();
  const { ask: askConfirm, dialog: confirmDialog } = useConfirmedAction(refresh, notifyError);
  const { copy, dialog: copyDialog } = useCopy();
  return (
    <>
      <Button
        variant="outlined"
        onClick={async () => {
          const rows = (data ?? []).filter((r) => selectedIds.includes(r.id));
          if (!rows.length) return notify(texts.selectOne, { type: 'warning' });
          const lines: string[] = [];
          try {
            for (const r of rows) lines.push(await textOf(r));
          } catch (e) {
            return notifyError(e);
          }
          copy(lines.join('\n'));
        }}
      >
        {translate(texts.copySelected)}
      </Button>
      <Button
        variant="outlined"
        color="error"
        onClick={() => {
          if (!selectedIds.length) return notify(texts.selectOne, { type: 'warning' });
          askConfirm({
            content: texts.confirmDelete,
            action: async () => {
              await dp.deleteMany(resource, { ids: selectedIds });
              notify(texts.deletedCount, { type: 'success', messageArgs: { count: selectedIds.length } });
              onUnselectItems();
            },
          });
        }}
      >
        {translate('res.common.delete_selected')}
      </Button>
      {confirmDialog}
      {copyDialog}
    </>
  );
};
