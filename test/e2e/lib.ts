/** Shared e2e helpers: steps with pass/fail counting, screenshots, waits. */
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';

export const SHOTS = path.join(__dirname, 'screenshots');
export const ADMIN = { username: 'root', password: 'e2e-pass-123' };
export const TIMEOUT = 15_000;

export const counts = { passed: 0, failed: 0 };
/** The page, for a screenshot when a step fails. */
export const active: { page?: Page } = {};
export const failures: string[] = [];

export async function step(name: string, fn: () => Promise<void>): Promise<boolean> {
  const started = Date.now();
  try {
    await fn();
    counts.passed++;
    console.log(`  ✓ ${name} (${Date.now() - started} ms)`);
    return true;
  } catch (err) {
    counts.failed++;
    const msg = err instanceof Error ? err.message.split('\n').slice(0, 6).join('\n') : String(err);
    failures.push(`${name}: ${msg}`);
    if (active.page)
      await active.page.screenshot({ path: path.join(SHOTS, `FAILED-${name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}.png`) }).catch(() => undefined);
    console.log(`  ✗ ${name}\n      ${msg.replace(/\n/g, '\n      ')}`);
    return false;
  }
}

export async function shot(page: Page, name: string): Promise<void> {
  await page.waitForTimeout(300);
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: false });
}

export function assert(cond: unknown, message: string): asserts cond {
  if (!cond) throw new Error(message);
}

export async function expectText(page: Page, text: string | RegExp, timeout = TIMEOUT): Promise<void> {
  await page.getByText(text).first().waitFor({ state: 'visible', timeout });
}

export async function expectPath(page: Page, pathname: string | RegExp, timeout = TIMEOUT): Promise<void> {
  await page.waitForURL((u) => (typeof pathname === 'string' ? u.pathname === pathname : pathname.test(u.pathname + u.search)), { timeout });
}

/**
 * A second browser context (its own cookies, the zh console) logged in as `username` through the
 * login page, landed on /token. Close `context` when done.
 */
export async function loginElsewhere(page: Page, base: string, username: string, password: string): Promise<{ context: BrowserContext; page: Page }> {
  const browser = page.context().browser();
  assert(browser, 'a browser');
  const context = await browser.newContext({ viewport: { width: 1366, height: 820 }, locale: 'zh-CN' });
  const other = await context.newPage();
  await other.goto(`${base}/login`);
  await other.getByLabel('用户名 / 邮箱').fill(username);
  await other.getByLabel('密码', { exact: true }).fill(password);
  await other.getByTestId('login-submit').click();
  await expectPath(other, '/token');
  return { context, page: other };
}
