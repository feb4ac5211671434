import { describe, expect, it } from 'vitest';
import { HttpError } from 'react-admin';
import { createApi } from '../../lib/http';
import { createAuthProvider, TwoFactorRequired } from '../../providers/authProvider';
import { memoryStorage, getUser, setStore } from '../../lib/storage';
import { requiredMethods } from './secureAction';

/** A client answering one fixed envelope. */
const answering = (body: unknown) => createApi({ fetch: async () => ({ status: 200, text: async () => JSON.stringify(body) }), getUserId: () => 1 });

describe('re-verification in the console', () => {
  it('recognises the server asking for a re-verification, with the methods it offers', async () => {
    const api = answering({
      success: false,
      message: '此操作需要安全验证，请先完成验证',
      data: { verification_required: true, methods: ['2fa', 'passkey', 'bogus'] },
    });
    const err = await api.get('/api/user/token').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HttpError);
    expect(requiredMethods(err)).toEqual(['2fa', 'passkey']);
  });

  it('any other refusal is not a verification request', async () => {
    const err = await answering({ success: false, message: '密码错误', data: null })
      .get('/api/user/token')
      .catch((e: unknown) => e);
    expect(requiredMethods(err)).toBeNull();
    expect(requiredMethods(new Error('x'))).toBeNull();
  });

  it('a password login on an account with 2FA stores nobody and asks for the code', async () => {
    setStore(memoryStorage());
    const auth = createAuthProvider(answering({ success: true, message: '请输入两步验证码', data: { require_2fa: true } }));
    await expect(auth.login({ username: 'alice', password: 'secret123' })).rejects.toBeInstanceOf(TwoFactorRequired);
    expect(getUser()).toBeNull();
  });
});
