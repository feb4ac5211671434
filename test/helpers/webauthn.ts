import crypto from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';

/**
 * A software authenticator for the server tests: a real P-256 key pair per credential, the
 * authenticator data, `none` attestation and ES256 assertion signatures built the way the
 * WebAuthn spec lays them out, so the server's @simplewebauthn verification runs for real.
 */
const b64u = (b: Buffer | Uint8Array) => Buffer.from(b).toString('base64url');
const sha256 = (b: Buffer | Uint8Array | string) => crypto.createHash('sha256').update(b).digest();

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

export interface SoftCredential {
  id: string;
  rpId: string;
  userHandle: string;
  privateKey: crypto.KeyObject;
  counter: number;
}

function counterBytes(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}

export class SoftAuthenticator {
  readonly credentials: SoftCredential[] = [];
  /** Sign counter step per assertion (0 = a counter-less authenticator, like many passkeys). */
  constructor(private readonly counterStep = 1) {}

  /** navigator.credentials.create() for these options, as @simplewebauthn/browser would send it. */
  create(options: PublicKeyCredentialCreationOptionsJSON, origin: string, opts: { uv?: boolean } = {}): RegistrationResponseJSON {
    const rpId = options.rp.id ?? new URL(origin).hostname;
    const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const cose = new Map<number, number | Uint8Array>([
      [1, 2], // kty: EC2
      [3, -7], // alg: ES256
      [-1, 1], // crv: P-256
      [-2, new Uint8Array(Buffer.from(jwk.x!, 'base64url'))],
      [-3, new Uint8Array(Buffer.from(jwk.y!, 'base64url'))],
    ]);
    const credId = crypto.randomBytes(32);
    const authData = Buffer.concat([
      sha256(rpId),
      Buffer.from([FLAG_UP | (opts.uv === false ? 0 : FLAG_UV) | FLAG_AT]),
      counterBytes(0),
      Buffer.alloc(16), // aaguid
      Buffer.from([credId.length >> 8, credId.length & 0xff]),
      credId,
      Buffer.from(isoCBOR.encode(cose)),
    ]);
    const attestationObject = isoCBOR.encode(
      new Map<string, string | Uint8Array | Map<string, string>>([
        ['fmt', 'none'],
        ['attStmt', new Map<string, string>()],
        ['authData', new Uint8Array(authData)],
      ]),
    );
    const clientDataJSON = Buffer.from(JSON.stringify({ type: 'webauthn.create', challenge: options.challenge, origin, crossOrigin: false }));
    const cred: SoftCredential = { id: b64u(credId), rpId, userHandle: options.user.id, privateKey, counter: 0 };
    this.credentials.push(cred);
    return {
      id: cred.id,
      rawId: cred.id,
      type: 'public-key',
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
      response: {
        clientDataJSON: b64u(clientDataJSON),
        attestationObject: b64u(attestationObject),
        transports: ['internal'],
      },
    };
  }

  /** navigator.credentials.get(): signs with the first credential for the RP the options allow. */
  get(
    options: PublicKeyCredentialRequestOptionsJSON,
    origin: string,
    opts: { credential?: SoftCredential; challenge?: string } = {},
  ): AuthenticationResponseJSON {
    const rpId = options.rpId ?? new URL(origin).hostname;
    const allowed = options.allowCredentials?.map((c) => c.id);
    const cred = opts.credential ?? this.credentials.find((c) => c.rpId === rpId && (!allowed?.length || allowed.includes(c.id)));
    if (!cred) throw new Error('no credential for this RP');
    cred.counter += this.counterStep;
    const authData = Buffer.concat([sha256(rpId), Buffer.from([FLAG_UP | FLAG_UV]), counterBytes(cred.counter)]);
    const clientDataJSON = Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge: opts.challenge ?? options.challenge, origin, crossOrigin: false }));
    const signature = crypto.sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), cred.privateKey);
    return {
      id: cred.id,
      rawId: cred.id,
      type: 'public-key',
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
      response: {
        clientDataJSON: b64u(clientDataJSON),
        authenticatorData: b64u(authData),
        signature: b64u(signature),
        userHandle: cred.userHandle,
      },
    };
  }
}
