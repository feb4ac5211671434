import crypto from 'node:crypto';
import type { TestApp } from './app';

/**
 * Headers that authenticate as `userId` with a system access token (the server's rule: `Authorization:
 * <token>` + `New-Api-User`), without going through the login endpoint.
 */
export async function accessHeaders(app: TestApp, userId: number): Promise<Record<string, string>> {
  const token = crypto.randomBytes(16).toString('hex');
  await app.knex('users').where({ id: userId }).update({ access_token: token });
  // As the Chinese console: the wording these tests check is the zh catalogue's.
  return { Authorization: token, 'New-Api-User': String(userId), 'Accept-Language': 'zh' };
}
