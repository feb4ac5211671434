export { ChannelList } from './ChannelList';
export { ChannelEditDrawer } from './ChannelEdit';
