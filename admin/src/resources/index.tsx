import type { ReactElement } from 'react';
import { Resource } from 'react-admin';
import HubIcon from '@mui/icons-material/Hub';
import KeyIcon from '@mui/icons-material/VpnKey';
import RedeemIcon from '@mui/icons-material/Redeem';
import PeopleIcon from '@mui/icons-material/People';
import ReceiptLongIcon from '@mui/icons-material/ReceiptLong';
import { ChannelList } from './channels';
import { TokenList } from './tokens';
import { RedemptionList } from './redemptions';
import { UserList } from './users';
import { LogList } from './logs';

/**
 * The console's CRUD resources (channels, tokens, redemptions, users, logs), as <Resource>
 * elements for <Admin>. `permissions` is the user's role (1, 10, 100): channels, redemptions and
 * users are admin screens (role ≥ 10). Create and edit are drawers over the list, opened by the
 * routes /<resource>/create and /<resource>/<id> (the list route matches them, so no edit/create
 * route is registered).
 */
export function renderResources(permissions: number | undefined): ReactElement[] {
  const admin = Number(permissions ?? 0) >= 10;
  const out: ReactElement[] = [];
  if (admin)
    out.push(
      <Resource key="channel" name="channel" list={ChannelList} icon={HubIcon} options={{ label: 'resources.channel.name' }} recordRepresentation="name" />,
    );
  out.push(<Resource key="token" name="token" list={TokenList} icon={KeyIcon} options={{ label: 'resources.token.name' }} recordRepresentation="name" />);
  if (admin)
    out.push(
      <Resource
        key="redemption"
        name="redemption"
        list={RedemptionList}
        icon={RedeemIcon}
        options={{ label: 'resources.redemption.name' }}
        recordRepresentation="name"
      />,
    );
  if (admin)
    out.push(<Resource key="user" name="user" list={UserList} icon={PeopleIcon} options={{ label: 'resources.user.name' }} recordRepresentation="username" />);
  out.push(<Resource key="log" name="log" list={LogList} icon={ReceiptLongIcon} options={{ label: 'resources.log.name' }} />);
  return out;
}
