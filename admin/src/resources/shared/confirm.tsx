import { useState } from 'react';
import { Confirm } from 'react-admin';
import { BulkError } from '../../lib/bulk';

export interface ConfirmedAction {
  title?: string;
  content: string;
  action: () => Promise<void>;
}

/**
 * A confirm dialog in front of an action: `ask({content, action})` opens it; on confirm the action
 * runs, then `onDone` (refresh), and a failure goes to `onError`. Render `dialog` once.
 */
export function useConfirmedAction(onDone: () => void, onError: (e: unknown) => void) {
  const [pending, setPending] = useState<ConfirmedAction | null>(null);
  const dialog = (
    <Confirm
      isOpen={!!pending}
      title={pending?.title ?? 'res.common.confirm_title'}
      content={pending?.content ?? ''}
      onClose={() => setPending(null)}
      onConfirm={async () => {
        const c = pending;
        setPending(null);
        try {
          await c?.action();
          onDone();
        } catch (e) {
          // A bulk action that failed for some items changed the others: refresh too.
          if (e instanceof BulkError) onDone();
          onError(e);
        }
      }}
    />
  );
  return { ask: setPending, dialog };
}
