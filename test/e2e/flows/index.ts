import type { Flow } from './types';
import { flow as playground } from './playground';
import { flow as pricing } from './pricing';
import { flow as wallet } from './wallet';
import { flow as personal } from './personal';
import { flow as settings } from './settings';
import { flow as dashboard } from './dashboard';
import { flow as channels } from './channels';
import { flow as channelForm } from './channelForm';
import { flow as resources } from './resources';
import { flow as tasks } from './tasks';
import { flow as security } from './security';
import { flow as channelKinds } from './channelKinds';
import { flow as notice } from './notice';
import { flow as consoleux } from './consoleux';
import { flow as topupOrders } from './topupOrders';

/** Feature flows run after the core flow, each in a fresh context logged in as root. */
export const FLOWS: Flow[] = [
  playground,
  pricing,
  wallet,
  personal,
  settings,
  dashboard,
  channels,
  channelForm,
  resources,
  tasks,
  security,
  channelKinds,
  notice,
  consoleux,
  topupOrders,
];
