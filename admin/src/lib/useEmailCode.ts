import { useMutation } from '@tanstack/react-query';
import { useNotify, useTranslate } from 'react-admin';
import { api, errorText, qs } from './http';
import { useCountdown } from './useCountdown';

/**
 * Sending an email verification code (GET /api/verification?email&turnstile), shared by the
 * registration page and the email binding: a react-query mutation (`sending` while it runs), then
 * `sentMessage` and a 30 s countdown before the next one (`left`, seconds).
 */
export function useEmailCode(sentMessage: string): { send: (email: string, turnstile: string) => void; sending: boolean; left: number } {
  const notify = useNotify();
  const translate = useTranslate();
  const [left, startCountdown] = useCountdown();
  const call = useMutation({
    mutationFn: ({ email, turnstile }: { email: string; turnstile: string }) => api().get(`/api/verification${qs({ email, turnstile })}`),
    onSuccess: () => {
      notify(sentMessage, { type: 'success' });
      startCountdown(30);
    },
    onError: (err) => notify(errorText(err, translate), { type: 'error' }),
  });
  return { send: (email, turnstile) => call.mutate({ email: email.trim(), turnstile }), sending: call.isPending, left };
}
