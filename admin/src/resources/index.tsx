import type { ComponentType, ReactElement } from 'react';
import { RequireUser } from '../pages/RequireUser';
import { Resource } from 'react-admin';
import HubIcon from '@mui/icons-material/Hub';
import KeyIcon from '@mui/icons-material/VpnKey';
import RedeemIcon from '@mui/icons-material/Redeem';
import PeopleIcon from '@mui/icons-material/People';
import ReceiptLongIcon from '@mui/icons-material/ReceiptLong';
import ReceiptIcon from '@mui/icons-material/Receipt';
import { ChannelList as ChannelListPage } from './channels';
import { TokenList as TokenListPage } from './tokens';
import { RedemptionList as RedemptionListPage } from './redemptions';
import { UserList as UserListPage } from './users';
import { LogList as LogListPage } from './logs';
import { TopupOrderList as TopupOrderListPage } from './topups';

const guardCache = new Map<ComponentType, ComponentType>();
/** The list behind the login guard (memoised: a new component type per render would remount the list). */
function guarded<P extends object>(C: ComponentType<P>): ComponentType<P> {
  let G = guardCache.get(C as ComponentType) as ComponentType<P> | undefined;
  if (!G) {
    G = (props: P) => (
      <RequireUser>
        <C {...props} />
      </RequireUser>
    );
    guardCache.set(C as ComponentType, G as ComponentType);
  }
  return G;
}

/**
 * The console's CRUD resources (channels, tokens, redemptions, top-up orders, users, logs), as
 * <Resource> elements for <Admin>. `permissions` is the user's role (1, 10, 100): channels,
 * redemptions, top-up orders and users are admin screens (role ≥ 10). Create and edit are drawers over the list, opened by the
 * routes /<resource>/create and /<resource>/<id> (the list route matches them, so no edit/create
 * route is registered).
 */
export function renderResources(permissions: number | null | undefined): ReactElement[] {
  // A visitor (no stored user) gets every list behind RequireUser, so /token, /channel… go to the
  // login page before the list mounts: no API call, no 401, no "login expired".
  // react-admin hands null (no permissions: nobody logged in) or undefined (still loading).
  const visitor = permissions == null;
  const admin = visitor || Number(permissions ?? 0) >= 10;
  const g = visitor ? guarded : <P extends object>(c: ComponentType<P>) => c;
  const ChannelList = g(ChannelListPage);
  const TokenList = g(TokenListPage);
  const RedemptionList = g(RedemptionListPage);
  const UserList = g(UserListPage);
  const LogList = g(LogListPage);
  const TopupOrderList = g(TopupOrderListPage);
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
    out.push(<Resource key="topup_order" name="topup_order" list={TopupOrderList} icon={ReceiptIcon} options={{ label: 'resources.topup_order.name' }} />);
  if (admin)
    out.push(<Resource key="user" name="user" list={UserList} icon={PeopleIcon} options={{ label: 'resources.user.name' }} recordRepresentation="username" />);
  out.push(<Resource key="log" name="log" list={LogList} icon={ReceiptLongIcon} options={{ label: 'resources.log.name' }} />);
  return out;
}
