import { useState } from 'react';
import { Box, Button, IconButton, Stack, Tooltip } from '@mui/material';
import PlayArrowIcon from '@mui/icons-material/PlayArrow';
import ArrowDropDownIcon from '@mui/icons-material/ArrowDropDown';
import EditIcon from '@mui/icons-material/Edit';
import { useRefresh, useTranslate } from 'react-admin';
import { useRouteDrawer } from '../shared/hooks';
import { isTagRow, type TagRow } from './channelTags';
import { useChannelGroups, useChannelOps, type ChannelRow } from './useChannelOps';
import { ChannelRowMenu } from './ChannelRowMenu';
import { TestModelDialog } from './TestModelDialog';
import { TagEditDrawer } from './TagEdit';

/** The actions cell: a tag row acts on all channels of its tag, a channel row on itself. */
export const ChannelRowActions = ({ row }: { row: ChannelRow }) => (isTagRow(row) ? <TagRowActions row={row} /> : <SingleRowActions row={row} />);

const TagRowActions = ({ row }: { row: TagRow }) => {
  const translate = useTranslate();
  const refresh = useRefresh();
  const { dp, run } = useChannelOps();
  const groups = useChannelGroups();
  const [editing, setEditing] = useState(false);
  return (
    <Stack direction="row" spacing={0.5}>
      <Button size="small" color="success" onClick={() => run(() => dp.enableTag(row.tag), 'res.common.op_success')}>
        {translate('res.channel.enable_all')}
      </Button>
      <Button size="small" color="warning" onClick={() => run(() => dp.disableTag(row.tag), 'res.common.op_success')}>
        {translate('res.channel.disable_all')}
      </Button>
      <Button size="small" startIcon={<EditIcon fontSize="small" />} onClick={() => setEditing(true)}>
        {translate('res.common.edit')}
      </Button>
      <TagEditDrawer
        row={editing ? row : null}
        groupsOptions={groups}
        onClose={() => setEditing(false)}
        onSaved={() => {
          setEditing(false);
          refresh();
        }}
      />
    </Stack>
  );
};

const SingleRowActions = ({ row }: { row: ChannelRow }) => {
  const translate = useTranslate();
  const { testChannel, setStatus } = useChannelOps();
  const { openEdit } = useRouteDrawer('channel');
  const [picking, setPicking] = useState(false);
  return (
    <Stack direction="row" spacing={0.5} alignItems="center">
      <Box sx={{ display: 'inline-flex' }}>
        <Button
          size="small"
          variant="outlined"
          startIcon={<PlayArrowIcon fontSize="small" />}
          onClick={() => testChannel(row)}
          sx={{ borderTopRightRadius: 0, borderBottomRightRadius: 0, minWidth: 0 }}
        >
          {translate('res.channel.test')}
        </Button>
        <Button
          size="small"
          variant="outlined"
          onClick={() => setPicking(true)}
          sx={{ borderTopLeftRadius: 0, borderBottomLeftRadius: 0, minWidth: 0, px: 0.5, ml: '-1px' }}
          aria-label={translate('res.channel.pick_model')}
        >
          <ArrowDropDownIcon fontSize="small" />
        </Button>
      </Box>
      {Number(row.status) === 1 ? (
        <Button size="small" color="warning" onClick={() => setStatus(row, 2)}>
          {translate('res.common.disable')}
        </Button>
      ) : (
        <Button size="small" color="success" onClick={() => setStatus(row, 1)}>
          {translate('res.common.enable')}
        </Button>
      )}
      <Tooltip title={translate('res.common.edit')}>
        <IconButton size="small" color="primary" onClick={() => openEdit(row.id)}>
          <EditIcon fontSize="small" />
        </IconButton>
      </Tooltip>
      <ChannelRowMenu row={row} />
      <TestModelDialog
        row={picking ? row : null}
        onClose={() => setPicking(false)}
        onPick={(r, m) => {
          setPicking(false);
          testChannel(r, m);
        }}
      />
    </Stack>
  );
};
