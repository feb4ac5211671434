import { IconButton, Tooltip } from '@mui/material';
import DeleteIcon from '@mui/icons-material/DeleteOutline';
import { useNotify, useResourceContext, useTranslate, type RaRecord } from 'react-admin';
import { useGateway } from './api';
import type { ConfirmedAction } from './confirm';

/** A row's delete icon: asks `confirm` (a translation key) through the list's confirm dialog, then deletes. */
export const RowDeleteButton = ({ record, confirm, ask }: { record: RaRecord; confirm: string; ask: (a: ConfirmedAction) => void }) => {
  const translate = useTranslate();
  const notify = useNotify();
  const resource = useResourceContext() ?? '';
  const dp = useGateway();
  return (
    <Tooltip title={translate('res.common.delete')}>
      <IconButton
        size="small"
        color="error"
        onClick={() =>
          ask({
            content: confirm,
            action: async () => {
              await dp.delete(resource, { id: record.id, previousData: record });
              notify('res.common.deleted', { type: 'success' });
            },
          })
        }
      >
        <DeleteIcon fontSize="small" />
      </IconButton>
    </Tooltip>
  );
};
