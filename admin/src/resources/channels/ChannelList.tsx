import { Box } from '@mui/material';
import { List } from 'react-admin';
import { GwPagination } from '../shared/GwPagination';
import { LIST_SX } from '../shared/styles';
import { readPageSize } from '../shared/pageSize';
import { useLocalState } from '../shared/storage';
import { useRouteDrawer } from '../shared/hooks';
import { ChannelEditDrawer } from './ChannelEdit';
import { ChannelListActions } from './ChannelListActions';
import { ChannelFilterBar } from './ChannelFilterBar';
import { ChannelTable } from './ChannelTable';

/**
 * The channel list. Id sort and tag mode are display settings kept in the browser and sent with
 * every list call; the search filters are kept in the URL.
 */
export const ChannelList = () => {
  const [idSort, setIdSort] = useLocalState<boolean>('channel-id-sort', false);
  const [tagMode, setTagMode] = useLocalState<boolean>('channel-tag-mode', false);
  const drawer = useRouteDrawer('channel');
  return (
    <>
      <List
        resource="channel"
        perPage={readPageSize('channel')}
        filter={{ id_sort: idSort, tag_mode: tagMode }}
        actions={false}
        pagination={<GwPagination />}
        empty={false}
        exporter={false}
        title="res.channel.title"
        storeKey={false}
        sx={LIST_SX}
      >
        <Box>
          <ChannelListActions idSort={idSort} setIdSort={setIdSort} tagMode={tagMode} setTagMode={setTagMode} openCreate={drawer.openCreate} />
          <ChannelFilterBar />
          <ChannelTable tagMode={tagMode} />
        </Box>
      </List>
      <ChannelEditDrawer creating={drawer.creating} editId={drawer.editId} onClose={drawer.close} />
    </>
  );
};
