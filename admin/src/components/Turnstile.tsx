import { useEffect, useRef } from 'react';

declare global {
  interface Window {
    turnstile?: {
      render(el: HTMLElement, opts: { sitekey: string; callback: (token: string) => void; 'expired-callback'?: () => void }): string;
      remove?(id: string): void;
    };
  }
}

const SCRIPT = 'https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit';
let loading: Promise<void> | undefined;

function loadScript(): Promise<void> {
  if (window.turnstile) return Promise.resolve();
  if (!loading) {
    loading = new Promise((resolve, reject) => {
      const s = document.createElement('script');
      s.src = SCRIPT;
      s.async = true;
      s.onload = () => resolve();
      s.onerror = () => {
        loading = undefined;
        reject(new Error('turnstile script failed'));
      };
      document.head.appendChild(s);
    });
  }
  return loading;
}

/** The Cloudflare Turnstile bot-check. Mount it only when turnstile_check is on: the script loads then. */
export function Turnstile({ siteKey, onToken }: { siteKey: string; onToken: (token: string) => void }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    let id: string | undefined;
    let alive = true;
    loadScript()
      .then(() => {
        if (alive && ref.current && window.turnstile) {
          id = window.turnstile.render(ref.current, { sitekey: siteKey, callback: onToken, 'expired-callback': () => onToken('') });
        }
      })
      .catch(() => undefined);
    return () => {
      alive = false;
      if (id && window.turnstile?.remove) window.turnstile.remove(id);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- the widget is rendered once per site key with the first `onToken`; a new callback identity must not reset a solved challenge
  }, [siteKey]);
  return <div ref={ref} data-testid="turnstile" style={{ display: 'flex', justifyContent: 'center', margin: '8px 0' }} />;
}
