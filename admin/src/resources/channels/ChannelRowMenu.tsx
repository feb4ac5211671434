import { useState } from 'react';
import { IconButton, Menu, MenuItem } from '@mui/material';
import MoreVertIcon from '@mui/icons-material/MoreVert';
import { useNotify, useRefresh, useTranslate } from 'react-admin';
import { useConfirmedAction } from '../shared/confirm';
import { useNotifyError } from '../shared/hooks';
import { useCopy } from '../shared/copy';
import { errorText } from '../shared/api';
import { useChannelOps, type ChannelRow } from './useChannelOps';
import { KeyListDialog } from './KeyListDialog';

/** The row's "more" menu: copy the channel, copy its id, delete it. */
export const ChannelRowMenu = ({ row }: { row: ChannelRow }) => {
  const translate = useTranslate();
  const notify = useNotify();
  const refresh = useRefresh();
  const notifyError = useNotifyError();
  const { dp } = useChannelOps();
  const { ask, dialog: confirmDialog } = useConfirmedAction(refresh, notifyError);
  const { copy, dialog: copyDialog } = useCopy();
  const [anchor, setAnchor] = useState<HTMLElement | null>(null);
  const [keys, setKeys] = useState(false);
  const multiKey = !!(row.channel_info as { is_multi_key?: boolean } | undefined)?.is_multi_key;

  const copyChannel = async () => {
    setAnchor(null);
    try {
      // Copied on the server: an admin only sees the masked key, so it cannot be copied by reading it.
      await dp.copyChannel(row.id);
      notify('res.channel.msg.copied', { type: 'success' });
      refresh();
    } catch (e) {
      notify(`${translate('res.channel.msg.copy_failed')}: ${errorText(e, translate)}`, { type: 'error' });
    }
  };

  return (
    <>
      <IconButton size="small" onClick={(e) => setAnchor(e.currentTarget)} aria-label="more">
        <MoreVertIcon fontSize="small" />
      </IconButton>
      <Menu anchorEl={anchor} open={!!anchor} onClose={() => setAnchor(null)}>
        {multiKey && (
          <MenuItem
            onClick={() => {
              setAnchor(null);
              setKeys(true);
            }}
          >
            {translate('res.channel.multi_key.manage')}
          </MenuItem>
        )}
        <MenuItem onClick={copyChannel}>{translate('res.channel.copy')}</MenuItem>
        <MenuItem
          onClick={() => {
            setAnchor(null);
            copy(String(row.id));
          }}
        >
          {translate('res.channel.copy_id')}
        </MenuItem>
        <MenuItem
          sx={{ color: 'error.main' }}
          onClick={() => {
            setAnchor(null);
            ask({
              title: 'res.common.delete',
              content: 'res.channel.confirm.delete',
              action: async () => {
                await dp.delete('channel', { id: row.id, previousData: row });
                notify('res.common.deleted', { type: 'success' });
              },
            });
          }}
        >
          {translate('res.common.delete')}
        </MenuItem>
      </Menu>
      {confirmDialog}
      {copyDialog}
      <KeyListDialog row={keys ? row : null} onClose={() => setKeys(false)} />
    </>
  );
};
