import type { AppContext } from '../context';
import type { RelayHttp } from '../relay/httpContext';
import { usageBatcher } from '../ledger/usage';
import { handleMidjourney, midjourneyPlatform } from './midjourney';
import { handleSuno, sunoPlatform } from './suno';
import { handleVideo, videoPlatform } from './video';
import { TaskPoller } from './poller';
import type { TaskKit } from './types';

export type { TaskKit } from './types';

/** Asynchronous tasks (docs/tasks.md): Midjourney, Suno and OpenAI video, one poller for all. */
const PLATFORMS = [midjourneyPlatform, sunoPlatform, videoPlatform];

/** This app's poller (tests tick it by hand with TASK_POLL_MS=0). */
export function taskPoller(app: AppContext): TaskPoller {
  return app.memo('tasks:poller', () => new TaskPoller(app, PLATFORMS, app.config.taskPollMs ?? 15_000));
}

/** Starts the poller; it stops (and gives back its leases) when the app closes. */
export function startTasks(app: AppContext): void {
  // Created first so it closes last: refund log rows written while the poller stops still flush.
  usageBatcher(app);
  const poller = taskPoller(app);
  app.onClose(() => poller.close());
  poller.start();
}

const MJ_PATH = /^\/mj-(?:fast|turbo|relax)\/mj\//;

/** Task paths outside the relay's own prefixes (`/v1/videos` is matched inside the relay). */
export function isTaskPath(path: string): boolean {
  return path.startsWith('/suno/') || MJ_PATH.test(path) || path.startsWith('/mj/');
}

export const isVideoPath = (path: string) => path === '/v1/videos' || path.startsWith('/v1/videos/');

/** Answers one task route (each platform answers its errors in its own protocol's shape). */
export function handleTaskRoute(app: AppContext, ctx: RelayHttp, kit: Omit<TaskKit, 'pollMs'>): Promise<void> {
  const full: TaskKit = { ...kit, pollMs: taskPoller(app).intervalMs };
  if (isVideoPath(ctx.path)) return handleVideo(app, ctx, full);
  if (ctx.path.startsWith('/suno/')) return handleSuno(app, ctx, full);
  return handleMidjourney(app, ctx, full);
}
