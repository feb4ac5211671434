import { KV_TARGETS, buildApp, type TestApp } from '../helpers/app';
import { checkModelRateLimit } from '../../server/src/services/modelRateLimit';
import { checkPromptSensitive, findSensitiveWord } from '../../server/src/services/sensitive';
import { RateLimitError, BadRequestError } from '../../server/src/lib/errors';

describe.each(KV_TARGETS.map((t) => [t.name, t] as const))('model request rate limit [%s]', (_n, target) => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    a = await buildApp(target);
    // A second node: its own DB, same KV namespace (on Redis the limit is global).
    b = await buildApp(target, { config: { redisPrefix: a.ctx.config.redisPrefix } });
    for (const app of [a, b]) {
      await app.ctx.options.set('ModelRequestRateLimitEnabled', 'true');
      await app.ctx.options.set('ModelRequestRateLimitDurationMinutes', '1');
    }
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  it('is off unless enabled', async () => {
    await a.ctx.options.set('ModelRequestRateLimitEnabled', 'false');
    await a.ctx.options.set('ModelRequestRateLimitCount', '1');
    for (let i = 0; i < 5; i++) await checkModelRateLimit(a.ctx, 1);
    await a.ctx.options.set('ModelRequestRateLimitEnabled', 'true');
  });

  it('limits all requests per user per window', async () => {
    for (const app of [a, b]) {
      await app.ctx.options.set('ModelRequestRateLimitCount', '3');
      await app.ctx.options.set('ModelRequestRateLimitSuccessCount', '1000');
    }
    await checkModelRateLimit(a.ctx, 42);
    await checkModelRateLimit(a.ctx, 42);
    // in process each node counts alone; on Redis b's call uses the shared budget
    const second = target.redis ? b : a;
    await checkModelRateLimit(second.ctx, 42);
    const err = await checkModelRateLimit(second.ctx, 42).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitError);
    expect((err as RateLimitError).retryAfterSeconds).toBeGreaterThan(0);
    // another user is unaffected
    await expect(checkModelRateLimit(a.ctx, 43)).resolves.toBeDefined();
  });

  it('limits successful requests separately from failed ones', async () => {
    for (const app of [a, b]) {
      await app.ctx.options.set('ModelRequestRateLimitCount', '0');
      await app.ctx.options.set('ModelRequestRateLimitSuccessCount', '2');
    }
    // failures (no success()) never count toward the success limit
    for (let i = 0; i < 5; i++) await checkModelRateLimit(a.ctx, 7);
    const t1 = await checkModelRateLimit(a.ctx, 7);
    await t1.success();
    const t2 = await checkModelRateLimit(target.redis ? b.ctx : a.ctx, 7);
    await t2.success();
    await expect(checkModelRateLimit(a.ctx, 7)).rejects.toBeInstanceOf(RateLimitError);
  });

  it('never lets concurrent requests past the total limit', async () => {
    for (const app of [a, b]) {
      await app.ctx.options.set('ModelRequestRateLimitCount', '10');
      await app.ctx.options.set('ModelRequestRateLimitSuccessCount', '1000');
    }
    const results = await Promise.allSettled(Array.from({ length: 40 }, (_, i) => checkModelRateLimit((i % 2 && target.redis ? b : a).ctx, 99)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(10);
  });
});

describe('sensitive words', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await buildApp(KV_TARGETS[0]!);
  });
  afterAll(async () => app.close());

  it('refuses prompts with a listed word only when both switches are on', async () => {
    await app.ctx.options.set('SensitiveWords', 'Forbidden\nsecret plan');
    expect(findSensitiveWord(app.ctx, 'the SECRET PLAN is')).toBe('secret plan');
    expect(() => checkPromptSensitive(app.ctx, ['a forbidden thing'])).not.toThrow();
    await app.ctx.options.set('CheckSensitiveEnabled', 'true');
    expect(() => checkPromptSensitive(app.ctx, ['a forbidden thing'])).not.toThrow();
    await app.ctx.options.set('CheckSensitiveOnPromptEnabled', 'true');
    expect(() => checkPromptSensitive(app.ctx, ['hello', 'a FORBIDDEN thing'])).toThrow(BadRequestError);
    expect(() => checkPromptSensitive(app.ctx, ['all clean'])).not.toThrow();
    await app.ctx.options.set('SensitiveWords', '');
    expect(() => checkPromptSensitive(app.ctx, ['a forbidden thing'])).not.toThrow();
  });
});
