import type nodemailerModule from 'nodemailer';
import type { AppContext } from '../context';
import { BadRequestError } from '../lib/errors';

// Loaded on first send: most gateways send mail rarely, and the module is ≈ 8 MB of memory.
const loadNodemailer = () => require('nodemailer') as typeof nodemailerModule; // eslint-disable-line @typescript-eslint/no-require-imports -- loaded on the first mail (memory)

/**
 * Sends one HTML mail through the SMTP server configured in the options (SMTPServer, SMTPPort,
 * SMTPAccount, SMTPFrom, SMTPToken, SMTPSSLEnabled). A transport is built per call so that an
 * option change applies at once on every node. Throws BadRequestError when SMTP is not set up,
 * and a BadRequestError with a short reason when the server refuses the mail (details are logged,
 * never sent to the client: they can echo credentials).
 */
export async function sendMail(app: AppContext, to: string, subject: string, html: string): Promise<void> {
  const o = app.options;
  const host = o.get('SMTPServer').trim();
  if (!host) throw new BadRequestError('mail.smtp_missing');
  const account = o.get('SMTPAccount').trim();
  const from = o.get('SMTPFrom').trim() || account;
  if (!from) throw new BadRequestError('mail.smtp_from_missing');
  const port = o.num('SMTPPort', 587) || 587;
  const secure = o.bool('SMTPSSLEnabled') || port === 465;
  const transport = loadNodemailer().createTransport({
    host,
    port,
    secure,
    auth: account ? { user: account, pass: o.get('SMTPToken') } : undefined,
    connectionTimeout: 15_000,
    greetingTimeout: 15_000,
    socketTimeout: 30_000,
  });
  const systemName = o.get('SystemName') || 'AI Gateway';
  try {
    await transport.sendMail({ from: `${systemName} <${from}>`, to, subject, html });
  } catch (err) {
    app.log.warn({ err: { message: (err as Error).message, code: (err as { code?: string }).code }, to }, 'sending mail failed');
    throw new BadRequestError('mail.send_failed');
  } finally {
    transport.close();
  }
}
