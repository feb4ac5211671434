import { checkOptionDependencies } from '../../server/src/services/options';

describe('option dependencies', () => {
  const from = (values: Record<string, string>) => (k: string) => values[k] ?? '';

  it('enables OIDC with a well-known URL (endpoints discovered) or with explicit endpoints, not with neither', () => {
    const creds = { 'oidc.client_id': 'id', 'oidc.client_secret': 'secret' };
    expect(() =>
      checkOptionDependencies('oidc.enabled', 'true', from({ ...creds, 'oidc.well_known': 'https://idp/.well-known/openid-configuration' })),
    ).not.toThrow();
    expect(() =>
      checkOptionDependencies(
        'oidc.enabled',
        'true',
        from({ ...creds, 'oidc.authorization_endpoint': 'https://idp/auth', 'oidc.token_endpoint': 'https://idp/token' }),
      ),
    ).not.toThrow();
    expect(() => checkOptionDependencies('oidc.enabled', 'true', from(creds))).toThrow(/OIDC/);
    expect(() => checkOptionDependencies('oidc.enabled', 'true', from({ 'oidc.well_known': 'https://idp/x' }))).toThrow(/OIDC/);
    expect(() => checkOptionDependencies('oidc.enabled', 'false', from({}))).not.toThrow();
  });
});
