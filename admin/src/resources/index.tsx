import type { ComponentType, ReactElement } from 'react';
import { RequireUser } from '../pages/RequireUser';
import { Resource } from 'react-admin';
import channels from './channels';
import tokens from './tokens';
import redemptions from './redemptions';
import users from './users';
import logs from './logs';
import topups from './topups';

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
 * <Resource> elements for <Admin>. Each resource folder's index exports its `{ list, icon, options,
 * recordRepresentation }`, as react-admin's demo does. `permissions` is the user's role (1, 10,
 * 100): channels, redemptions, top-up orders and users are admin screens (role ≥ 10). Create and
 * edit are drawers over the list, opened by the routes /<resource>/create and /<resource>/<id> (the
 * list route matches them, so no edit/create route is registered).
 */
export function renderResources(permissions: number | null | undefined): ReactElement[] {
  // A visitor (no stored user) gets every list behind RequireUser, so /token, /channel… go to the
  // login page before the list mounts: no API call, no 401, no "login expired".
  // react-admin hands null (no permissions: nobody logged in) or undefined (still loading).
  const visitor = permissions == null;
  const admin = visitor || Number(permissions ?? 0) >= 10;
  const g = visitor ? guarded : <P extends object>(c: ComponentType<P>) => c;
  const out: ReactElement[] = [];
  if (admin) out.push(<Resource key="channel" name="channel" {...channels} list={g(channels.list)} />);
  out.push(<Resource key="token" name="token" {...tokens} list={g(tokens.list)} />);
  if (admin) out.push(<Resource key="redemption" name="redemption" {...redemptions} list={g(redemptions.list)} />);
  if (admin) out.push(<Resource key="topup_order" name="topup_order" {...topups} list={g(topups.list)} />);
  if (admin) out.push(<Resource key="user" name="user" {...users} list={g(users.list)} />);
  out.push(<Resource key="log" name="log" {...logs} list={g(logs.list)} />);
  return out;
}
