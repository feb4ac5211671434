import HubIcon from '@mui/icons-material/Hub';
import { ChannelList } from './ChannelList';

/** The channel resource (admins): the list; create and edit are drawers over it (/channel/create, /channel/:id). */
export default {
  list: ChannelList,
  icon: HubIcon,
  options: { label: 'resources.channel.name' },
  recordRepresentation: 'name',
};
